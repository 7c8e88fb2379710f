"""Recorded loops read back through the C++ reader: the first non-finite step, its origin, the bad
samples and the per-layer counts, each against what the test works out with plain torch."""

from __future__ import annotations

import math
from pathlib import Path
from typing import List, Set, Tuple

import torch
from torch import nn

import nanscope
from conftest import export_steps, regression, report, train


def nonfinite_per_step(steps: int, lr: float) -> Tuple[List[List[str]], List[Set[str]]]:
    """Plain torch, no recorder: for each step, the modules whose output held NaN or Inf (in the
    order their forwards ended), and those whose output's gradient did."""
    model, optimizer, x, y = regression(lr)
    outputs: List[str] = []
    grads: Set[str] = set()

    def check(module: nn.Module, inputs: object, output: torch.Tensor, name: str) -> None:
        if not torch.isfinite(output).all():
            outputs.append(name)
        output.register_hook(lambda g: grads.add(name) if not torch.isfinite(g).all() else None)

    for name, module in model.named_modules():
        module.register_forward_hook(lambda m, i, o, name=name: check(m, i, o, name))
    per_step_outputs, per_step_grads = [], []
    for _ in range(steps):
        outputs.clear()
        grads.clear()
        train(model, optimizer, x, y, 1)
        per_step_outputs.append(list(outputs))
        per_step_grads.append(set(grads))
    return per_step_outputs, per_step_grads


def test_a_diverging_regression_is_read_back_as_plain_torch_sees_it(tmp_path: Path) -> None:
    steps, lr = 30, 0.5
    model, optimizer, x, y = regression(lr)
    plain = train(*regression(lr), steps)
    path = tmp_path / "diverge.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        recorded = train(model, optimizer, x, y, steps, rec)
    # The recorder never changes the training: the same losses, bit for bit.
    assert [math.isnan(v) for v in plain] == [math.isnan(v) for v in recorded]
    assert all(a == b for a, b in zip(plain, recorded) if not math.isnan(a))

    first_bad_loss = next(i for i, v in enumerate(plain) if not math.isfinite(v))
    outputs, grads = nonfinite_per_step(steps, lr)
    first_bad_output = next((i for i, o in enumerate(outputs) if o), steps)
    first = min(first_bad_loss, first_bad_output)
    s = report(path)
    assert s["finished"] is True
    assert s["steps_run"] == steps
    assert s["first_nonfinite_step"] == first
    if first_bad_output == first:  # the first module whose output went bad made it
        assert s["origin"]["phase"] == "forward"
        assert s["origin"]["layer"] == outputs[first][0]
    else:  # MSE squares outputs that are still finite into an infinite loss
        assert s["origin"]["phase"] == "loss"
        assert s["origin"]["layer"] is None
    # Per layer, the steps whose output held NaN/Inf, or the gradient flowing into it.
    expected = {name: sum(1 for o, g in zip(outputs, grads) if name in o or name in g)
                for name, _ in model.named_modules()}
    assert s["nonfinite_steps_per_layer"] == {name: n for name, n in expected.items() if n}

    rows = export_steps(path, tmp_path)
    assert [int(r["step"]) for r in rows] == list(range(steps))
    assert float(rows[0]["loss"]) == plain[0]
    assert all(r["origin_phase"] == "" for r in rows[:first])
    assert rows[first]["origin_phase"] == s["origin"]["phase"]
    assert float(rows[3]["lr"]) == lr


class Gate(nn.Module):
    """sqrt on the negative side of a where: a finite forward, a NaN gradient (d sqrt(x) at x < 0)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))


def test_a_where_gate_makes_its_nan_in_backward(tmp_path: Path) -> None:
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 8), Gate(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    path = tmp_path / "gate.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        # Independently: the gradient reaching the first layer's weights is NaN, its output finite.
        assert torch.isnan(model[0].weight.grad).any()
        optimizer.step()
        rec.step(loss)
    s = report(path)
    assert s["first_nonfinite_step"] == 0
    assert s["origin"]["phase"] == "backward"
    # The gradient into layer 0's output is made by the backward of what consumed it: the gate.
    assert s["origin"]["layer"] == "1"
    assert s["origin"]["produced"] is True


class LogLoss(nn.Module):
    def forward(self, p: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return -(y * torch.log(p)).sum(dim=1).mean()


def test_log_of_zero_in_a_custom_loss(tmp_path: Path) -> None:
    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())  # ReLU outputs exact zeros
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 4)
    y = torch.ones(8, 3)
    path = tmp_path / "log.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        optimizer.zero_grad()
        out = model(x)
        assert (out == 0).any() and torch.isfinite(out).all()
        loss = LogLoss()(out, y)
        assert torch.isinf(loss)
        loss.backward()
        optimizer.step()
        rec.step(loss)
    s = report(path)
    assert s["first_nonfinite_step"] == 0
    assert s["origin"]["phase"] == "loss"


def test_bad_samples_are_named_by_dataset_index(tmp_path: Path) -> None:
    torch.manual_seed(3)
    data = torch.randn(64, 5)
    data[10, 2] = float("nan")
    data[50, 0] = float("inf")
    targets = torch.randn(64, 1)
    dataset = torch.utils.data.TensorDataset(torch.arange(64), data, targets)
    loader = torch.utils.data.DataLoader(dataset, batch_size=16, shuffle=False)
    model = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    path = tmp_path / "samples.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for index, x, y in loader:
            optimizer.zero_grad(set_to_none=True)
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            rec.step(loss, samples=index)
    s = report(path)
    assert s["first_nonfinite_step"] == 0  # sample 10 is in the first batch
    assert s["origin"]["phase"] == "input"
    assert "samples 10" in s["origin"]["explanation"]
    rows = export_steps(path, tmp_path)
    assert [r["bad_samples"] for r in rows] == ["10", "", "", "50"]
