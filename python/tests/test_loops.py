"""Loops with the shapes real training code has, recorded and read back through the C++ reader,
each against what plain torch says: a module called in a loop, a shared tower on two inputs, a
tied weight, a teacher inside the model, gradient accumulation with a bad row in a later
micro-batch, a time-first batch, and validation passes between steps."""

from __future__ import annotations

import sqlite3

from pathlib import Path
from typing import Callable, List, Optional, Tuple

import pytest
import torch
from torch import nn

import nanscope
import conftest


def first_call_that_made_it(model: nn.Module, forward: Callable[[], object]) -> Optional[Tuple[str, int, int]]:
    """Plain forward hooks, no recorder: the first module call (in the order calls ended) whose
    floating inputs were finite and whose output was not, as (module path, call, calls)."""
    calls: List[Tuple[str, bool, bool]] = []

    def finite(value: object) -> bool:
        tensors = [value] if isinstance(value, torch.Tensor) else [v for v in value if isinstance(v, torch.Tensor)] \
            if isinstance(value, (tuple, list)) else []
        return all(bool(torch.isfinite(t).all()) for t in tensors if t.is_floating_point())

    handles = [m.register_forward_hook(lambda m, i, o, name=name: calls.append((name, finite(i), finite(o))))
               for name, m in model.named_modules()]
    with torch.no_grad():
        forward()
    for h in handles:
        h.remove()
    for k, (name, inputs_ok, output_ok) in enumerate(calls):
        if inputs_ok and not output_ok:
            made = sum(1 for n, _, _ in calls[:k + 1] if n == name)
            return name, made, sum(1 for n, _, _ in calls if n == name)
    return None


def one_step(model: nn.Module, path: Path, loss_of: Callable[[], torch.Tensor]) -> dict:
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        optimizer.zero_grad()
        loss = loss_of()
        loss.backward()
        optimizer.step()
        rec.step(loss)
    return conftest.report(path)


class Unrolled(nn.Module):
    """One cell applied `times` times in a forward, as an unrolled recurrent net is."""

    def __init__(self, times: int, gain: float) -> None:
        super().__init__()
        self.times = times
        self.cell = nn.Linear(8, 8, bias=False)
        with torch.no_grad():
            self.cell.weight.copy_(torch.eye(8) * gain)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.times):
            x = self.cell(x)
        return x.sum(dim=1)


class Siamese(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tower = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (self.tower(a) - self.tower(b)).pow(2).sum(dim=1)


class TiedLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.body = nn.Linear(8, 8)
        self.out = nn.Linear(8, 16, bias=False)
        self.out.weight = self.embed.weight  # weight tying

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.out(self.body(self.embed(ids)))


class Sqrt(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sqrt()  # NaN where x < 0


class Distill(nn.Module):
    """A frozen teacher, run under no_grad inside the forward, and a student: one model."""

    def __init__(self) -> None:
        super().__init__()
        self.teacher = nn.Sequential(nn.Linear(4, 4), Sqrt())
        self.student = nn.Linear(4, 4)
        self.teacher.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            target = self.teacher(x)
        return (self.student(x) - target).pow(2).mean(dim=1)


@pytest.mark.parametrize("case", ["cell-in-a-loop", "shared-tower", "tied-weight", "teacher-inside"])
def test_the_origin_is_the_first_call_that_made_it(tmp_path: Path, case: str) -> None:
    torch.manual_seed(1)
    if case == "cell-in-a-loop":  # 6^k passes float32's 3.4e38 in the 50th call of 60
        model: nn.Module = Unrolled(60, 6.0)
        x = torch.ones(4, 8)
        args: Tuple[torch.Tensor, ...] = (x,)
    elif case == "shared-tower":  # the second input is finite but overflows the tower's first layer
        model = Siamese()
        args = (torch.randn(4, 4), torch.full((4, 4), 3e38))
    elif case == "tied-weight":  # huge embeddings: the tied output projection overflows
        model = TiedLM()
        with torch.no_grad():
            model.embed.weight.mul_(1e19)
        args = (torch.randint(0, 16, (4, 6)),)
    else:
        model = Distill()
        args = (torch.randn(4, 4),)
    truth = first_call_that_made_it(model, lambda: model(*args))
    assert truth is not None
    s = one_step(model, tmp_path / "run.nsrun", lambda: model(*args).mean())
    assert s["first_nonfinite_step"] == 0
    assert (s["origin"]["phase"], s["origin"]["layer"], s["origin"]["produced"]) == ("forward", truth[0], True)
    if truth[2] > 1:
        assert f"in call {truth[1]} of {truth[2]}" in s["origin"]["explanation"]
    else:
        assert " call " not in s["origin"]["explanation"]
    if case == "cell-in-a-loop":
        assert truth[1:] == (50, 60)  # the set-up's own arithmetic: 6^49 < 3.4e38 < 6^50
    # The step's row keeps the call (format version 4), NULL for a layer that ran once.
    with sqlite3.connect(f"file:{tmp_path / 'run.nsrun'}?mode=ro", uri=True) as db:
        kept = db.execute("SELECT origin_call, origin_calls FROM steps WHERE step = 0").fetchone()
    assert kept == (truth[1:] if truth[2] > 1 else (None, None))


def test_accumulation_names_the_bad_row_of_a_later_micro_batch(tmp_path: Path) -> None:
    torch.manual_seed(0)
    data = torch.randn(128, 4)
    data[77, 2] = float("nan")
    targets = torch.randn(128, 1)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    path = tmp_path / "accumulate.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for step in range(3):
            optimizer.zero_grad()
            indices = list(range(step * 32, step * 32 + 32))
            for k in range(4):  # four micro-batches of 8 rows a step
                rows = indices[k * 8:(k + 1) * 8]
                loss = nn.functional.mse_loss(model(data[rows]), targets[rows]) / 4
                loss.backward()
            optimizer.step()
            rec.step(loss, samples=indices)
    bad_step = 77 // 32  # the truth: the step whose rows hold index 77, in its second micro-batch
    assert (77 - bad_step * 32) // 8 == 1
    s = conftest.report(path)
    assert s["first_nonfinite_step"] == bad_step
    assert s["origin"]["phase"] == "input"
    assert "(samples 77)" in s["origin"]["explanation"]
    rows = conftest.export_steps(path, tmp_path)
    assert rows[bad_step]["bad_samples"] == "77"
    assert all(r["bad_samples"] == "" for k, r in enumerate(rows) if k != bad_step)


class TimeFirst(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(3, 5)  # batch_first=False: (time, batch, features)
        self.head = nn.Linear(5, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.head(out[-1])


@pytest.mark.parametrize("time_steps, batch_dim, note", [
    (7, None, False),  # the samples' count tells the batch's dimension (1)
    (4, None, True),   # time and batch both 4: cannot be told, and said so
    (4, 1, False),     # named by the user
])
def test_a_time_first_batch_names_its_bad_row(tmp_path: Path, time_steps: int, batch_dim: Optional[int],
                                              note: bool) -> None:
    torch.manual_seed(0)
    model = TimeFirst()
    x = torch.randn(time_steps, 4, 3)
    x[2, 1, 0] = float("inf")  # batch row 1, at time 2
    samples = [40, 41, 42, 43]
    truth = [samples[b] for b in range(4) if not torch.isfinite(x[:, b]).all()]
    assert truth == [41]
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    path = tmp_path / "time-first.nsrun"
    with nanscope.record(model, path, optimizer=optimizer, batch_dim=batch_dim) as rec:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        rec.step(loss, samples=samples)
    s = conftest.report(path)
    assert s["origin"]["phase"] == "input"
    assert "(samples 41)" in s["origin"]["explanation"]
    assert ("cannot be told" in s["origin"]["explanation"]) == note


def test_validation_passes_between_steps_stay_out_of_the_training_steps(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    bad = torch.full((16, 4), float("nan"))
    path = tmp_path / "validate.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for _ in range(4):
            model.train()
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            rec.step(loss, samples=range(16))
            model.eval()  # validation: in eval mode with autograd on, then under no_grad
            model(bad)
            with torch.no_grad():
                model.train()
                model(bad)
    s = conftest.report(path)
    assert s["steps_run"] == 4
    assert s["first_nonfinite_step"] is None
    assert all(r["bad_samples"] == "" and r["origin_phase"] == "" for r in conftest.export_steps(path, tmp_path))


def test_a_copy_of_the_model_is_not_recorded_as_the_model(tmp_path: Path) -> None:
    """copy.deepcopy copies a module's hooks: an EMA twin made while recording runs them too, and
    its forward (here on a NaN batch) must not pass for a pass of the recorded model."""
    import copy
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    path = tmp_path / "twin.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for _ in range(3):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            twin = copy.deepcopy(model)
            twin(torch.full((8, 4), float("nan")))
            optimizer.step()
            rec.step(loss, samples=range(8))
    s = conftest.report(path)
    assert s["steps_run"] == 3
    assert s["first_nonfinite_step"] is None
