"""A loss scaler's overflows are the scaler at work: skipped updates and a smaller scale, not the
run's first non-finite step (the C++ rule), until the scale falls below 2^-24.

Debian's PyTorch 1.13 has no CPU GradScaler (the CUDA one disables itself without a GPU), so the
tests drive the recorder with a scaler written the way GradScaler works: the loss multiplied by
the scale, the update skipped when a scaled gradient is not finite, the scale cut then. Where
torch's own GradScaler runs (PyTorch 2.3+ on the CPU, or a GPU), the same steps are checked with
it too; here that test skips, saying why."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import pytest
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


class FusedSGD(torch.optim.SGD):
    """SGD as PyTorch 2.x's fused optimizers meet a GradScaler: called on every step, handed the
    scale and ``found_inf`` as attributes, and leaving the update out itself on an overflow."""

    _step_supports_amp_scaling = True

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:  # type: ignore[override]
        if bool(self.found_inf.ne(0).any()):
            return None
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self.grad_scale)
        return super().step(closure)


class FusedHalvingScaler(HalvingScaler):
    """GradScaler's protocol with a fused optimizer (2.x, ``torch/amp/grad_scaler.py``): it sets
    ``grad_scale`` and ``found_inf`` on the optimizer, calls its step always, then removes both."""

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        self._found_inf = not all(bool(torch.isfinite(g).all()) for g in grads)
        optimizer.grad_scale = self._scale.clone()  # type: ignore[attr-defined]
        optimizer.found_inf = torch.tensor([1.0 if self._found_inf else 0.0])  # type: ignore[attr-defined]
        try:
            optimizer.step()
        finally:
            del optimizer.grad_scale, optimizer.found_inf  # type: ignore[attr-defined]


def torch_grad_scaler(init_scale: float) -> Tuple[Optional[Any], str]:
    """torch's own GradScaler where this PyTorch runs one here, with the device it scales on: the
    CPU one (``torch.amp.GradScaler("cpu")``, PyTorch 2.3+), else the CUDA one on a GPU; else None."""
    factory = getattr(getattr(torch, "amp", None), "GradScaler", None)
    # A backoff that gets from 1e38 to gradients that fit in a step or two, as HalvingScaler's.
    if factory is not None:
        return factory("cpu", init_scale=init_scale, backoff_factor=2.0 ** -40), "cpu"
    if torch.cuda.is_available():
        return torch.cuda.amp.GradScaler(init_scale=init_scale, backoff_factor=2.0 ** -40), "cuda"
    return None, ""


def train_absorbing(scaler: Any, device: str, path: Path, skipped_of: Callable[[Any, float], bool],
                    optimizer_class: Any = torch.optim.SGD, **record: Any) -> List[bool]:
    """Six steps whose first scaled gradients overflow float32; which steps the scaler skipped."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).to(device)
    optimizer = optimizer_class(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 4), torch.randn(16, 1) * 100.0  # gradients of tens: times 1e38 they overflow
    x, y = x.to(device), y.to(device)
    skipped: List[bool] = []
    with nanscope.record(model, path, optimizer=optimizer, scaler=scaler, **record) as rec:
        for _ in range(6):
            optimizer.zero_grad()
            scale_before = scaler.get_scale()
            loss = nn.functional.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            skipped.append(skipped_of(scaler, scale_before))
            rec.step(loss)
    return skipped


def check_absorbed(path: Path, tmp_path: Path, skipped: List[bool]) -> None:
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


def test_overflows_the_scaler_absorbs_are_not_the_origin(tmp_path: Path) -> None:
    path = tmp_path / "scaler.nsrun"
    skipped = train_absorbing(HalvingScaler(init_scale=1e38), "cpu", path, lambda scaler, _: scaler._found_inf)
    check_absorbed(path, tmp_path, skipped)


@pytest.mark.parametrize("policy", ["record", "rollback"])
def test_a_fused_optimizer_that_skips_its_own_update_is_a_scaler_skip(tmp_path: Path, policy: str) -> None:
    # 2.x calls a fused optimizer's step even on an overflow (its kernel skips): the recorder reads
    # found_inf, and a guard leaves the scaler's skip alone (no rollback of an ordinary back-off).
    path = tmp_path / f"fused-{policy}.nsrun"
    skipped = train_absorbing(FusedHalvingScaler(init_scale=1e38), "cpu", path, lambda scaler, _: scaler._found_inf,
                              optimizer_class=FusedSGD, on_nonfinite=policy)
    check_absorbed(path, tmp_path, skipped)
    assert report(path)["rollbacks"] == 0
    rows = export_steps(path, tmp_path)
    # The gradient norm the update got is the unscaled one, as backward's (without clipping).
    kept = [(float(r["grad_norm"]), float(r["grad_norm_clipped"])) for r, skip in zip(rows, skipped) if not skip]
    assert kept and all(math.isclose(a, b, rel_tol=1e-5) for a, b in kept)


@pytest.mark.skipif(torch_grad_scaler(1.0)[0] is None,
                    reason="torch's own GradScaler does not run here: PyTorch before 2.3 has no CPU one, and this "
                           "machine has no CUDA device (HalvingScaler above stands in for it)")
def test_torchs_own_grad_scaler_is_followed_the_same_way(tmp_path: Path) -> None:
    scaler, device = torch_grad_scaler(1e38)
    path = tmp_path / "grad-scaler.nsrun"
    skipped = train_absorbing(scaler, device, path, lambda s, before: s.get_scale() < before)
    check_absorbed(path, tmp_path, skipped)


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
