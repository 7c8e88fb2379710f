"""A loop slow enough to steer, recording with nanscope.record: row 13 of its data holds NaN at the
steps listed (a step numbered 1 modulo 8 draws it). Prints one JSON line a step: the step, the
learning rate its update used, whether the model is finite after it; or, told to stop, the step.

Usage: python3 steered_loop.py OUT.nsrun POLICY STEPS NAN_STEPS [PAUSE_TIMEOUT [PAUSE_DEFAULT]]
       NAN_STEPS is comma-separated, or "-" for none. test_steer.py and tst_recorded_loop_window
       run it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import List

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import nanscope  # noqa: E402


def main(path: str, policy: str, steps: int, nan_at: List[int], pause_timeout: float, pause_default: str) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    clean = torch.randn(64, 4)
    y = clean.sum(dim=1, keepdim=True)
    bad = clean.clone()
    bad[13, 2] = float("nan")
    with nanscope.record(model, path, optimizer=optimizer, on_nonfinite=policy, pause_timeout=pause_timeout,
                         pause_default=pause_default) as rec:
        for step in range(steps):
            x = bad if step in nan_at else clean
            batch = torch.arange(8 * (step % 8), 8 * (step % 8) + 8)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x[batch]), y[batch])
            loss.backward()
            lr = optimizer.param_groups[0]["lr"]  # the rate this step's update uses
            optimizer.step()
            try:
                rec.step(loss, samples=batch)
            except nanscope.Stopped as stopped:
                print(json.dumps({"stopped": stopped.step, "finite": rec.finite}), flush=True)
                return
            print(json.dumps({"step": step, "lr": lr, "finite": rec.finite}), flush=True)
            time.sleep(0.05)


if __name__ == "__main__":
    if not 5 <= len(sys.argv) <= 7:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(s) for s in sys.argv[4].split(",") if s not in ("", "-")],
         float(sys.argv[5]) if len(sys.argv) > 5 else 60.0, sys.argv[6] if len(sys.argv) > 6 else "skip")
