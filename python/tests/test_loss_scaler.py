"""A loss scaler's overflows are the scaler at work: skipped updates and a smaller scale, not the
run's first non-finite step (the C++ rule), until the scale falls below 2^-24.

Debian's PyTorch 1.13 has no CPU GradScaler (the CUDA one disables itself without a GPU), so the
test drives the recorder with a scaler written the way GradScaler works: the loss multiplied by
the scale, the update skipped when a scaled gradient is not finite, the scale halved then."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import List

import torch
from torch import nn

import nanscope
import conftest
from conftest import export_steps, report


class HalvingScaler:
    """GradScaler's contract, on any device: scale, step (skipped on an overflow), update."""

    def __init__(self, init_scale: float) -> None:
        self._scale = torch.tensor(init_scale)
        self._found_inf = False

    def is_enabled(self) -> bool:
        return True

    def get_scale(self) -> float:
        return float(self._scale)

    def scale(self, loss: torch.Tensor) -> torch.Tensor:
        return loss * self._scale

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        self._found_inf = not all(bool(torch.isfinite(g).all()) for g in grads)
        if self._found_inf:
            return  # GradScaler skips optimizer.step()
        for g in grads:
            g.div_(self._scale)
        optimizer.step()

    def update(self) -> None:
        if self._found_inf:
            self._scale = self._scale / 2.0 ** 40


def test_overflows_the_scaler_absorbs_are_not_the_origin(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = HalvingScaler(init_scale=1e38)  # the scaled gradients overflow float32 at first
    x, y = torch.randn(16, 4), torch.randn(16, 1) * 100.0  # gradients of tens: times 1e38 they overflow
    path = tmp_path / "scaler.nsrun"
    skipped: List[bool] = []
    with nanscope.record(model, path, optimizer=optimizer, scaler=scaler) as rec:
        for _ in range(6):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            skipped.append(scaler._found_inf)
            scaler.update()
            rec.step(loss)
    assert skipped[0] and not skipped[-1]  # the scaler backed off until the gradients fit
    s = report(path)
    assert s["first_nonfinite_step"] is None
    assert s["skipped_steps"] == sum(skipped)
    assert s["scaler_skipped_steps"] == sum(skipped)
    # The last step's scale, as it began: after every back-off before it (the last was not one).
    assert math.isclose(s["final_loss_scale"], 1e38 / 2.0 ** (40 * sum(skipped)), rel_tol=1e-6)
    rows = export_steps(path, tmp_path)
    assert [r["skipped"] == "1" for r in rows] == skipped
    assert math.isclose(float(rows[0]["loss_scale"]), 1e38, rel_tol=1e-6)
    assert all(r["origin_phase"] in ("", "backward") for r in rows)


def test_a_scale_that_keeps_falling_below_one_is_warned_of_once(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = HalvingScaler(init_scale=1.0)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    x[0, 0] = float("inf")  # every step overflows: the scale falls and falls
    path = tmp_path / "falling.nsrun"
    scales = []
    with nanscope.record(model, path, optimizer=optimizer, scaler=scaler) as rec:
        for _ in range(4):
            optimizer.zero_grad()
            scales.append(scaler.get_scale())
            loss = nn.functional.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            rec.step(loss)
    # The C++ rule: warned at the first step whose scale is below 1 and below an earlier one below 1.
    due = next(i for i in range(1, len(scales)) if scales[i] < 1.0 and any(1.0 > s > scales[i] for s in scales[:i]))
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    warnings = db.execute("SELECT step, text FROM events WHERE kind = 'warning'").fetchall()
    assert [step for step, _ in warnings] == [due]
    assert warnings[0][1].startswith("the loss scale fell to ")
    said = conftest.assert_events_carry_messages(path)
    assert [i for kind, i, _ in said if kind == "warning"] == ["loss-scale-falling"]
    recoveries = [i for kind, i, _ in said if kind == "recovery"]  # the steps the scaler skipped
    assert recoveries and set(recoveries) == {"scaler-skipped-update"}
