"""Whatever PyTorch trains, the recorder follows without changing it: the same losses bit for bit
with and without it, a file the C++ reader opens, and what it cannot measure named with the
reason. A scheduler created before the recorder (the usual order) warns of nothing."""

from __future__ import annotations

import json
import sqlite3
import warnings
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import pytest
import torch
import torch.utils.checkpoint
from torch import nn

import nanscope
import conftest

Case = Tuple[Callable[[], nn.Module], Callable[[nn.Module], torch.Tensor]]


class SparseEmbedding(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4, sparse=True)  # its gradient is a sparse tensor
        self.head = nn.Linear(4, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(ids))


class ScriptedPart(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = torch.jit.script(nn.Sequential(nn.Linear(4, 4), nn.Tanh()))  # takes no Python hooks
        self.head = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


class ComplexWeights(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, dtype=torch.cfloat))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.w).abs()


class Checkpointed(nn.Module):
    def __init__(self, reentrant: bool) -> None:
        super().__init__()
        self.reentrant = reentrant
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
        self.head = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=self.reentrant))


class UnusedBranch(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.used = nn.Linear(4, 1)
        self.unused = nn.Linear(4, 1)  # gets no gradient

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.used(x)


class IntegerBufferAndDict(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, batch: Dict[str, torch.Tensor]) -> Dict[str, object]:
        self.calls += 1
        return {"logits": self.fc(batch["x"]), "count": 3}


def _x() -> torch.Tensor:
    return torch.randn(3, 4, requires_grad=True)


CASES: Dict[str, Case] = {
    "sparse-gradient": (SparseEmbedding, lambda m: m(torch.tensor([1, 2, 3])).sum()),
    "scripted-submodule": (ScriptedPart, lambda m: m(torch.randn(3, 4)).sum()),
    "scripted-model": (lambda: torch.jit.script(nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))),
                       lambda m: m(torch.randn(3, 4)).sum()),
    "complex": (ComplexWeights, lambda m: m(torch.randn(3, 4, dtype=torch.cfloat)).sum()),
    "bf16": (lambda: nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1)).to(torch.bfloat16),
             lambda m: m(torch.randn(3, 4, dtype=torch.bfloat16)).float().sum()),
    "checkpoint-reentrant": (lambda: Checkpointed(True), lambda m: m(_x()).sum()),
    "checkpoint": (lambda: Checkpointed(False), lambda m: m(torch.randn(3, 4)).sum()),
    "unused-parameters": (UnusedBranch, lambda m: m(torch.randn(3, 4)).sum()),
    "integer-buffer-dict-io": (IntegerBufferAndDict, lambda m: m({"x": torch.randn(3, 4)})["logits"].sum()),  # type: ignore[index]
    "lstm": (lambda: nn.LSTM(4, 3), lambda m: m(torch.randn(5, 2, 4))[0].sum()),
    "transformer": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2),
                    lambda m: m(torch.randn(6, 3, 8)).sum()),
}


def train(case: Case, steps: int, path: Path = None) -> Tuple[List[float], "nanscope.Recorder"]:
    torch.manual_seed(0)
    model = case[0]()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    rec = nanscope.record(model, path, optimizer=optimizer) if path is not None else None
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = case[1](model)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if rec is not None:
            rec.step(loss)
    if rec is not None:
        rec.close()
    return losses, rec


@pytest.mark.parametrize("name", list(CASES))
def test_the_loop_trains_as_without_the_recorder(tmp_path: Path, name: str) -> None:
    plain, _ = train(CASES[name], 3)
    path = tmp_path / f"{name}.nsrun"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not a word from the recorder either
        recorded, rec = train(CASES[name], 3, path)
    assert recorded == plain
    assert rec.error is None
    s = conftest.report(path)
    conftest.assert_events_carry_messages(path)
    assert s["steps_run"] == 3
    assert s["error"] is None
    with sqlite3.connect(path) as db:
        config = json.loads(db.execute("SELECT config FROM run").fetchone()[0])
        warned = [text for (text,) in db.execute("SELECT text FROM events WHERE kind = 'warning'")]
        grad_norms = [v for (v,) in db.execute("SELECT grad_norm FROM steps")]
    not_measured = config["recorder"]["not_measured"]
    if name.startswith("scripted"):  # named, with the reason, in the file's config and its events
        expected = ["encoder", "encoder.0", "encoder.1"] if name == "scripted-submodule" else ["", "0", "1", "2"]
        assert [n["layer"] for n in not_measured] == expected
        assert all("TorchScript" in n["why"] for n in not_measured)
        assert len([t for t in warned if t.startswith("not measured:")]) == len(expected)
    else:
        assert not_measured == []
    assert all(v is not None and v > 0 for v in grad_norms)  # the gradients were measured


def test_an_error_inside_the_recorder_stops_recording_and_not_the_loop(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure of the recorder's own (here: a measurement that raises from step 2 on) is recorded,
    the file is closed readable with the steps so far, and the loop trains on unchanged."""
    case = CASES["unused-parameters"]
    plain, _ = train(case, 5)
    from nanscope import health
    real_add = health.StatBatch.add
    calls = {"n": 0}

    def failing_add(self: health.StatBatch, t: torch.Tensor) -> int:
        calls["n"] += 1
        if calls["n"] > 15:
            raise RuntimeError("a measurement failed")
        return real_add(self, t)

    monkeypatch.setattr(health.StatBatch, "add", failing_add)
    path = tmp_path / "failing.nsrun"
    with pytest.warns(RuntimeWarning, match="the recorder stopped at step"):
        recorded, rec = train(case, 5, path)
    assert recorded == plain
    assert "a measurement failed" in (rec.error or "")
    s = conftest.report(path, failed_run=True)
    assert 0 < s["steps_run"] < 5
    assert "a measurement failed" in s["error"]


@pytest.mark.parametrize("order", ["scheduler-first", "recorder-first"])
def test_a_learning_rate_scheduler_warns_of_nothing(tmp_path: Path, order: str) -> None:
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if order == "scheduler-first":
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)
            rec = nanscope.record(model, tmp_path / "run.nsrun", optimizer=optimizer)
        else:
            rec = nanscope.record(model, tmp_path / "run.nsrun", optimizer=optimizer)
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)
        for _ in range(3):
            optimizer.zero_grad()
            loss = model(torch.randn(2, 4)).sum()
            loss.backward()
            optimizer.step()
            scheduler.step()
            rec.step(loss)
        rec.close()
    assert optimizer.param_groups[0]["lr"] == 0.1 * 0.5 ** 3
    lrs = [float(r["lr"]) for r in conftest.export_steps(tmp_path / "run.nsrun", tmp_path)]
    assert lrs == [0.1, 0.05, 0.025]  # as the update used it
