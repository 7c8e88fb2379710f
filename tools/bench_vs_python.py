"""NaNScope's full per-layer map against a Python PyTorch loop with hooks, side by side.

Usage: /usr/bin/python3 tools/bench_vs_python.py NANSCOPE [--rounds R] [--steps S]

The model is the StableModel MLP of `nanscope bench` (fc1 100->64, bn1, relu1, dropout 0.3, fc2
64->64, bn2, relu2, dropout 0.3, fc3 64->10), batch 32 from 512 random samples, AdamW at 1e-3,
cross-entropy, one thread on both sides. The Python loop checks what NaNScope's map checks: a
forward hook on every module tests its output for NaN/Inf, a tensor hook tests the gradient
flowing into that output, and after backward every parameter and its gradient are tested.

Each round times S Python steps without hooks, S with hooks, then runs
`NANSCOPE bench --only mlp --rounds S --json` (probe off and full map interleaved inside it), so
machine noise reaches both sides alike. Prints the medians over the rounds and the ratio
python-with-hooks / nanscope-full-map (the target is at least 1.6).
"""
import argparse
import json
import statistics
import subprocess
import time

import torch
from torch import nn


def stable_model():
    return nn.Sequential(
        nn.Linear(100, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.3),
        nn.Linear(64, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(0.3),
        nn.Linear(64, 10))


class Checks:
    """Per-layer forward and gradient checks, as a Python user writes them."""

    def __init__(self, model):
        self.bad = 0
        self.model = model
        for module in model.modules():
            module.register_forward_hook(self.forward_hook)

    def forward_hook(self, module, inputs, output):
        if not bool(torch.isfinite(output).all()):
            self.bad += 1
        if output.requires_grad:
            output.register_hook(self.grad_hook)

    def grad_hook(self, grad):
        if not bool(torch.isfinite(grad).all()):
            self.bad += 1

    def after_backward(self):
        for p in self.model.parameters():
            if not bool(torch.isfinite(p).all()) or not bool(torch.isfinite(p.grad).all()):
                self.bad += 1


def python_step_ms(steps, hooks):
    torch.manual_seed(7)
    model = stable_model().train()
    checks = Checks(model) if hooks else None
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(512, 100), torch.randint(10, (512,))
    times = []
    for step in range(steps + 5):
        begin = (step * 32) % 512
        xb, yb = x[begin:begin + 32], y[begin:begin + 32]
        t0 = time.perf_counter()
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        if checks:
            checks.after_backward()
        optimizer.step()
        if step >= 5:
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def nanscope_step_ms(exe, steps):
    out = subprocess.run([exe, "bench", "--only", "mlp", "--rounds", str(steps), "--json"],
                         check=True, capture_output=True, text=True).stdout
    row = json.loads(out.strip().splitlines()[-1])
    return row["probe_off_ms"], row["full_map_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nanscope")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = {"python plain": [], "python hooks": [], "nanscope off": [], "nanscope map": []}
    for r in range(args.rounds):
        rows["python plain"].append(python_step_ms(args.steps, hooks=False))
        rows["python hooks"].append(python_step_ms(args.steps, hooks=True))
        off, full = nanscope_step_ms(args.nanscope, args.steps)
        rows["nanscope off"].append(off)
        rows["nanscope map"].append(full)
        print("round %d: %s" % (r + 1, "  ".join("%s %.3f" % (k, v[-1]) for k, v in rows.items())), flush=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print("torch %s, %d rounds of %d steps, batch 32, 1 thread; median ms per step:" %
          (torch.__version__, args.rounds, args.steps))
    for k, v in med.items():
        print("  %-13s %.3f" % (k, v))
    print("python hooks / python plain      %.2fx" % (med["python hooks"] / med["python plain"]))
    print("nanscope map / nanscope off      %.2fx" % (med["nanscope map"] / med["nanscope off"]))
    print("python hooks / nanscope map      %.2fx  (target >= 1.6)" % (med["python hooks"] / med["nanscope map"]))
    per_round = [h / m for h, m in zip(rows["python hooks"], rows["nanscope map"])]
    print("per-round ratio min %.2fx, max %.2fx" % (min(per_round), max(per_round)))


if __name__ == "__main__":
    main()
