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

The files below are torch.jit.script models; the inputs named are what a run feeds them.
  lstm_lm.pt               Embedding(50,16) -> LSTM(16,20) -> Linear(20,50) over int64 token ids
                           [B,12]; lstm_tokens.pt holds [64,12] ids in [0,50), each row
                           counting up by 3 from a random start (mod 50): learnable.
  lstm_lm.shapes           numel of the lstm's output, h and c for an [8,12] batch, one a line.
  masked_attention.pt      inp -> attn (MaskedAttention: q,k,v) -> out on [8,5,8]. Query row 0
                           masks every key, so masked_fill makes -Inf and softmax makes the NaN.
  masked_attention.lines   "masked_fill<TAB>python_fixtures.py:<line>" and the same for softmax.
  causal_transformer.pt    inp -> enc (TransformerEncoderLayer, causal -Inf mask built in the
                           root's forward) -> out on [8,5,8]: healthy, the -Inf never leaves
                           the attention.
  root_forward_nan.pt      fc1 -> sqrt(h - 100) in the root's forward -> fc2 on [8,4]: NaN born
                           in forward outside any child; root_forward_nan.line names the sqrt.
  root_backward_nan.pt     fc1 -> h + sqrt(h - h.detach()) in the root's forward -> fc2 on [8,4]:
                           the forward is finite, sqrt's gradient at 0 is Inf and reaches fc1's
                           output gradient; root_backward_nan.line names the sqrt.
  dict_output.pt           fc and aux on [8,4], returning {"logits": fc(x), "aux": aux(x)}.
  two_inputs.pt            forward(x, mask) = fc(x * mask), both float [B,4]; two_inputs.x.pt
                           and two_inputs.mask.pt hold [32,4] each, two_inputs.both.pt the tuple.
  mha.pt                   MultiheadAttention(8, 2 heads) -> out on [8,5,8]; mha.shapes holds
                           the numel of its attention output and averaged weights, one a line.
  model_loss.pt            fc on [8,4], returning its own scalar loss mean(fc(x)^2).
  next_token.pt            embed (Embedding(50,16)) -> mean over the sequence -> head (Linear
                           16->50): scores [B,50] for the token after a sequence of ids.
"""
import inspect
import os
import sys
import warnings

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


class LstmLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 20, batch_first=True)
        self.head = nn.Linear(20, 50)

    def forward(self, tokens):
        out, (h, c) = self.lstm(self.embed(tokens))
        return self.head(out)


class MaskedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.v = nn.Linear(8, 8)

    def forward(self, x):
        scores = torch.matmul(self.q(x), self.k(x).transpose(-2, -1))
        # Query row 0 may attend to nothing, as with a padding row masked on both sides: its
        # scores are all -Inf and softmax divides 0 by 0.
        rows = torch.arange(scores.size(-2), device=x.device).unsqueeze(1)
        mask = (rows == 0).expand_as(scores)
        scores = scores.masked_fill(mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return torch.matmul(weights, self.v(x))


class MaskedAttentionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 8)
        self.attn = MaskedAttention()
        self.out = nn.Linear(8, 4)

    def forward(self, x):
        return self.out(self.attn(self.inp(x)))


class CausalTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.enc = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        s = x.size(1)
        # The diagonal stays 0, so every query keeps one key and no row is all -Inf.
        mask = torch.triu(torch.full((s, s), float("-inf"), device=x.device), diagonal=1)
        return self.out(self.enc(self.inp(x), src_mask=mask))


class RootForwardNan(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = self.fc1(x)
        h = torch.sqrt(h - 100.0)
        return self.fc2(h)


class RootBackwardNan(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = self.fc1(x)
        # Adds exactly 0 in forward; d sqrt(u)/du at u = 0 is Inf, so backward is not finite.
        h = h + torch.sqrt(h - h.detach())
        return self.fc2(h)


class DictOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.aux = nn.Linear(4, 2)

    def forward(self, x):
        return {"logits": self.fc(x), "aux": self.aux(x)}


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, mask):
        return self.fc(x * mask)


class MhaModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(8, 2, batch_first=True)
        self.out = nn.Linear(8, 4)

    def forward(self, x):
        o, w = self.mha(x, x, x)
        return self.out(o)


class ModelLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return (self.fc(x) ** 2).mean()


class NextToken(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.head = nn.Linear(16, 50)

    def forward(self, tokens):
        return self.head(self.embed(tokens).mean(1))


def source_line(function, needle):
    """The file line of the first line of function that contains needle."""
    lines, first = inspect.getsourcelines(function)
    offset = next(i for i, text in enumerate(lines) if needle in text)
    return "python_fixtures.py:%d" % (first + offset)


def log_line():
    return source_line(LogHead.forward, "torch.log")


def write_lines(path, lines):
    with open(path, "w") as f:
        f.write("".join("%s\n" % line for line in lines))


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

    # A seed of their own: the models below draw their weights apart from the ones above.
    torch.manual_seed(2)
    lstm = LstmLM()
    torch.jit.script(lstm).save(os.path.join(out, "lstm_lm.pt"))
    # A language to learn: each sequence counts up by 3 from a random start (mod 50), so the next
    # token follows from the current one and the loss can fall well below log(50).
    # (Drawn as a [64,12] block, of which the first column starts each row, so that the models
    # below draw the same numbers as before.)
    starts = torch.randint(50, (64, 12))[:, :1]
    torch.save((starts + 3 * torch.arange(12)) % 50, os.path.join(out, "lstm_tokens.pt"))
    with torch.no_grad():
        output, (h, c) = lstm.lstm(lstm.embed(torch.randint(50, (8, 12))))
    write_lines(os.path.join(out, "lstm_lm.shapes"), [t.numel() for t in (output, h, c)])

    torch.jit.script(MaskedAttentionModel()).save(os.path.join(out, "masked_attention.pt"))
    write_lines(os.path.join(out, "masked_attention.lines"),
                ["masked_fill\t" + source_line(MaskedAttention.forward, ".masked_fill("),
                 "softmax\t" + source_line(MaskedAttention.forward, "torch.softmax(")])

    with warnings.catch_warnings():
        # torch 1.13's TransformerEncoderLayer lists batch_first in __constants__ but keeps it on
        # self_attn; scripting warns about that and is otherwise fine.
        warnings.filterwarnings("ignore", message="'batch_first' was found in ScriptModule constants")
        torch.jit.script(CausalTransformer()).save(os.path.join(out, "causal_transformer.pt"))

    torch.jit.script(RootForwardNan()).save(os.path.join(out, "root_forward_nan.pt"))
    write_lines(os.path.join(out, "root_forward_nan.line"),
                [source_line(RootForwardNan.forward, "torch.sqrt")])

    backward_nan = RootBackwardNan()
    # The fixture is only worth having while sqrt's gradient at 0 stays Inf in this torch.
    x = torch.randn(8, 4)
    y = backward_nan(x)
    y.pow(2).mean().backward()
    assert torch.isfinite(y).all() and not torch.isfinite(backward_nan.fc1.weight.grad).all()
    backward_nan.zero_grad(set_to_none=True)
    torch.jit.script(backward_nan).save(os.path.join(out, "root_backward_nan.pt"))
    write_lines(os.path.join(out, "root_backward_nan.line"),
                [source_line(RootBackwardNan.forward, "torch.sqrt")])

    torch.jit.script(DictOutput()).save(os.path.join(out, "dict_output.pt"))

    torch.jit.script(TwoInputs()).save(os.path.join(out, "two_inputs.pt"))
    x = torch.randn(32, 4)
    mask = (torch.rand(32, 4) < 0.5).float()
    torch.save(x, os.path.join(out, "two_inputs.x.pt"))
    torch.save(mask, os.path.join(out, "two_inputs.mask.pt"))
    torch.save((x, mask), os.path.join(out, "two_inputs.both.pt"))

    mha = MhaModel()
    torch.jit.script(mha).save(os.path.join(out, "mha.pt"))
    x = torch.randn(8, 5, 8)
    with torch.no_grad():
        o, w = mha.mha(x, x, x)
    write_lines(os.path.join(out, "mha.shapes"), [o.numel(), w.numel()])

    torch.jit.script(ModelLoss()).save(os.path.join(out, "model_loss.pt"))
    torch.jit.script(NextToken()).save(os.path.join(out, "next_token.pt"))


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
