"""A Python loop slow enough to steer from a window, recording with nanscope.record: row 13 of its
data holds NaN at the steps listed (a step numbered 1 modulo 8 draws it). Prints one JSON line a
step: the step, the learning rate its update used, whether the model is finite after it.

Usage: python3 tests/python_steered_loop.py OUT.nsrun POLICY STEPS NAN_STEPS
       (tst_recorded_loop_window runs it; NAN_STEPS is comma-separated, or "-" for none)
"""

from __future__ import annotations

import json
import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import nanscope  # noqa: E402


def main(path: str, policy: str, steps: int, nan_at: list) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    clean = torch.randn(64, 4)
    y = clean.sum(dim=1, keepdim=True)
    bad = clean.clone()
    bad[13, 2] = float("nan")
    with nanscope.record(model, path, optimizer=optimizer, on_nonfinite=policy, pause_timeout=60) as rec:
        for step in range(steps):
            x = bad if step in nan_at else clean
            batch = torch.arange(8 * (step % 8), 8 * (step % 8) + 8)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x[batch]), y[batch])
            loss.backward()
            lr = optimizer.param_groups[0]["lr"]
            optimizer.step()
            try:
                rec.step(loss, samples=batch)
            except nanscope.Stopped as stopped:
                print(json.dumps({"stopped": stopped.step, "finite": rec.finite}), flush=True)
                return
            print(json.dumps({"step": step, "lr": lr, "finite": rec.finite}), flush=True)
            time.sleep(0.05)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(s) for s in sys.argv[4].split(",") if s not in ("", "-")])
