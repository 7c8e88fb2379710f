"""Writes a run file with the Python recorder whose events cover its own sentences: the recording's
start, a TorchScript submodule it cannot hook, a step without an update, and the overflow forecast
of a diverging regression before its first non-finite step.

Usage: python3 tests/python_event_run.py OUT.nsrun   (tst_recorded_loop_window runs it)
"""

from __future__ import annotations

import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import nanscope  # noqa: E402


def main(path: str) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), torch.jit.script(nn.ReLU()), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    x = torch.randn(32, 4)
    y = x.sum(dim=1, keepdim=True) * 10
    with nanscope.record(model, path, optimizer=optimizer, name="events.py") as rec:
        for step in range(30):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            if step != 1:  # step 1 skips its update
                optimizer.step()
            rec.step(loss)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
