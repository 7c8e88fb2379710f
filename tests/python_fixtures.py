"""Models written by real PyTorch (Debian's python3-torch), for tst_python_models.

Usage: python3 python_fixtures.py OUTDIR            writes the fixtures below into OUTDIR
       python3 python_fixtures.py --check FILE.pt   loads FILE.pt, runs it on an [8,3,16,16]
                                                   batch and prints "ok <n params> <finite>"

OUTDIR receives:
  traced_resnet.pt         torch.jit.trace of a small ResNet (Sequential stem, two BasicBlocks of
                           one type with an in-place ReLU module called twice and `out += x`).
  traced_resnet.modules    named_modules() as Python sees it: "path<TAB>type" per line.
  traced_resnet.input.pt   an [8,3,16,16] batch, and traced_resnet.output.pt the model's output.
  scripted_log.pt          torch.jit.script of fc -> head, where head takes log(x - 10): NaN born
                           in forward at aten::log, on the line written to log_line.
  traced_log.pt            the same model traced.
  log_line                 "python_fixtures.py:<line of the log>".
"""
import inspect
import os
import sys

import torch
from torch import nn


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x
        return self.relu(out)


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.layer1 = nn.Sequential(BasicBlock(8), BasicBlock(8))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.layer1(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


class LogHead(nn.Module):
    def forward(self, x):
        return torch.log(x - 10.0)  # the NaN is born here


class LogModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.head = LogHead()

    def forward(self, x):
        return self.head(self.fc(x))


def log_line():
    lines, first = inspect.getsourcelines(LogHead.forward)
    offset = next(i for i, text in enumerate(lines) if "torch.log" in text)
    return "python_fixtures.py:%d" % (first + offset)


def write_fixtures(out):
    torch.manual_seed(1)
    resnet = TinyResNet().train()
    x = torch.randn(8, 3, 16, 16)
    traced = torch.jit.trace(resnet, x)
    traced.save(os.path.join(out, "traced_resnet.pt"))
    with open(os.path.join(out, "traced_resnet.modules"), "w") as f:
        for path, module in resnet.named_modules():
            f.write("%s\t%s\n" % (path, type(module).__name__))
    torch.save(x, os.path.join(out, "traced_resnet.input.pt"))
    # Train mode: BatchNorm normalises with the batch's statistics, so the output does not
    # depend on how often the model ran before.
    with torch.no_grad():
        torch.save(traced(x), os.path.join(out, "traced_resnet.output.pt"))

    log_model = LogModel()
    torch.jit.script(log_model).save(os.path.join(out, "scripted_log.pt"))
    torch.jit.trace(log_model, torch.randn(8, 4)).save(os.path.join(out, "traced_log.pt"))
    with open(os.path.join(out, "log_line"), "w") as f:
        f.write(log_line())


def check(path):
    model = torch.jit.load(path)
    out = model(torch.randn(8, 3, 16, 16))
    params = sum(p.numel() for p in model.parameters())
    finite = all(bool(torch.isfinite(p).all()) for p in model.parameters())
    print("ok", params, "finite" if finite and bool(torch.isfinite(out).all()) else "nonfinite")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
    elif len(sys.argv) == 2:
        write_fixtures(sys.argv[1])
    else:
        sys.exit(__doc__)
