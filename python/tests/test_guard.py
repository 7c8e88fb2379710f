"""The recorder as a guard (``on_nonfinite``): what each policy does to the update of a step whose
gradients are not finite, checked against states the test keeps itself."""

from __future__ import annotations

import copy
import sqlite3
import warnings
from pathlib import Path
from typing import Dict, List, Set

import pytest
import torch
from torch import nn

import nanscope
from conftest import one_step, report

BAD_ROW = 13  # the dataset index holding NaN


def model_and_data(seed: int = 0) -> tuple:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    x = torch.randn(64, 4)
    x[BAD_ROW, 2] = float("nan")
    y = x.nan_to_num().sum(dim=1, keepdim=True) * 0.5  # a target the model can learn
    return model, x, y


def state_of(model: nn.Module, optimizer: torch.optim.Optimizer) -> Dict[str, object]:
    return {"model": copy.deepcopy(model.state_dict()), "optimizer": copy.deepcopy(optimizer.state_dict())}


def same_tensors(a: object, b: object) -> bool:
    """Every tensor of two nested states equal bit for bit (NaN nowhere)."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and bool(torch.equal(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_tensors(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same_tensors(u, v) for u, v in zip(a, b))
    return a == b


def rows(path: Path, where: str) -> List[tuple]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(f"SELECT step, skipped, rolled_back, why, quarantined FROM steps WHERE {where} "
                          "ORDER BY step").fetchall()
    finally:
        db.close()


def test_skip_keeps_the_state_finite_through_a_nan_batch(tmp_path: Path) -> None:
    model, x, y = model_and_data()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    path = tmp_path / "skip.nsrun"
    losses: List[float] = []
    with nanscope.record(model, path, optimizer=optimizer, on_nonfinite="skip") as rec:
        for step in range(24):
            batch = torch.arange(8 * (step % 8), 8 * (step % 8) + 8)  # step 1 holds row 13, then 9, 17
            before = state_of(model, optimizer) if step == 1 else None
            losses.append(float(one_step(model, optimizer, x[batch], y[batch])))
            rec.step(losses[-1], samples=batch)
            if before is not None:  # the update, the optimizer's state and the running statistics: untouched
                assert same_tensors(state_of(model, optimizer), before)
                assert all(p.grad is None or not p.grad.any() for p in model.parameters())
            assert rec.finite
    bad_steps = [1, 9, 17]
    assert [s for s, loss in enumerate(losses) if loss != loss] == bad_steps
    assert all(loss == loss for s, loss in enumerate(losses) if s not in bad_steps)
    assert losses[-1] < losses[0] * 0.5  # and the model went on learning
    why = "non-finite gradients: the update was skipped and the gradients zeroed"
    assert rows(path, "skipped = 1") == [(1, 1, 0, why, f"[{BAD_ROW}]"), (9, 1, 0, why, None), (17, 1, 0, why, None)]
    summary = report(path)
    assert summary["skipped_steps"] == 3 and summary["rollbacks"] == 0
    assert summary["quarantined_samples"] == [BAD_ROW]
    assert rec.quarantined == {BAD_ROW}


def test_rollback_restores_the_kept_state_and_halves_the_learning_rate(tmp_path: Path) -> None:
    model, x, y = model_and_data()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    path = tmp_path / "rollback.nsrun"
    bad = {13, 15}  # a finite step (14) between two rollbacks: the kept state must not have moved
    began: Dict[int, Dict[str, object]] = {}
    with nanscope.record(model, path, optimizer=optimizer, on_nonfinite="rollback") as rec:
        for step in range(18):
            batch = torch.arange(8, 16) if step in bad else torch.arange(16 + 8 * (step % 6), 24 + 8 * (step % 6))
            began[step] = state_of(model, optimizer)
            lr = optimizer.param_groups[0]["lr"]
            rec.step(one_step(model, optimizer, x[batch], y[batch]), samples=batch)
            if step in bad:
                # Kept every 10 steps from a finite one: step 10's state, as it began.
                expected = began[10]
                assert same_tensors(model.state_dict(), expected["model"])
                kept = expected["optimizer"]
                now = optimizer.state_dict()
                assert same_tensors(now["state"], kept["state"])  # type: ignore[index]
                assert optimizer.param_groups[0]["lr"] == lr / 2
    assert rows(path, "rolled_back = 1") == [
        (13, 1, 1, "non-finite gradients: restored the state of step 10 (parameters, buffers, optimizer), "
                   "lr halved to 0.01", f"[{BAD_ROW}]"),
        (15, 1, 1, "non-finite gradients: restored the state of step 10 (parameters, buffers, optimizer), "
                   "lr halved to 0.005", None)]
    summary = report(path)
    assert summary["rollbacks"] == 2 and summary["final_learning_rate"] == 0.005
    assert rec.finite


def test_rollback_without_a_kept_state_skips_and_gives_up_after_three_in_a_row(tmp_path: Path) -> None:
    model, x, y = model_and_data()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    path = tmp_path / "give-up.nsrun"
    bad = torch.arange(8, 16)
    with nanscope.record(model, path, optimizer=optimizer, on_nonfinite="rollback") as rec:
        rec.step(one_step(model, optimizer, x[bad], y[bad]))  # step 0: nothing kept yet
        for step in range(1, 4):
            rec.step(one_step(model, optimizer, x[:8], y[:8]))  # kept at step 1
        for _ in range(3):
            rec.step(one_step(model, optimizer, x[bad], y[bad]))  # rollbacks 1, 2, 3
        with pytest.raises(nanscope.NonFiniteError, match="still non-finite after 3 rollbacks in a row") as raised:
            rec.step(one_step(model, optimizer, x[bad], y[bad]))
    assert raised.value.step == 7
    assert rows(path, "step = 0")[0][3] == "non-finite gradients and no checked-finite state kept yet: update skipped"
    assert [r[0] for r in rows(path, "rolled_back = 1")] == [4, 5, 6]
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1 / 8)
    assert report(path)["stopped_by_policy"] is True  # the loop caught the error: the run ended without one


def test_raise_stops_before_the_update_with_the_origin(tmp_path: Path) -> None:
    model, x, y = model_and_data()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    path = tmp_path / "raise.nsrun"
    with pytest.raises(nanscope.NonFiniteError) as raised:
        with nanscope.record(model, path, optimizer=optimizer, on_nonfinite="raise") as rec:
            for step in range(4):
                batch = torch.arange(8 * step, 8 * step + 8)
                before = state_of(model, optimizer)
                rec.step(one_step(model, optimizer, x[batch], y[batch]), samples=batch)
    error = raised.value
    assert error.step == 1 and error.origin is not None
    assert error.origin["phase"] == "input" and f"samples {BAD_ROW}" in str(error)
    assert same_tensors(state_of(model, optimizer), before)  # no NaN reached the weights
    assert rec.finite
    summary = report(path, failed_run=True)
    assert summary["stopped_by_policy"] is True and summary["steps_run"] == 2
    assert summary["error"].startswith("NonFiniteError: nanscope: step 1:")


def test_quarantine_sampler_leaves_the_bad_rows_out(tmp_path: Path) -> None:
    model, x, y = model_and_data()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.utils.data.TensorDataset(x, y)
    seen: List[Set[int]] = []
    with nanscope.record(model, tmp_path / "q.nsrun", optimizer=optimizer, on_nonfinite="skip") as rec:
        sampler = nanscope.QuarantineSampler(torch.utils.data.RandomSampler(data), rec.quarantined)
        indices = torch.utils.data.DataLoader(range(len(data)), batch_size=8, sampler=sampler)
        for epoch in range(2):
            seen.append(set())
            assert len(sampler) == 64 - epoch
            for batch in indices:
                seen[-1].update(int(i) for i in batch)
                rec.step(one_step(model, optimizer, x[batch], y[batch]), samples=batch)
    assert BAD_ROW in seen[0] and seen[1] == set(range(64)) - {BAD_ROW}
    assert rec.quarantined == {BAD_ROW}


def test_a_guard_needs_an_optimizer_and_a_known_policy(tmp_path: Path) -> None:
    model, _, _ = model_and_data()
    with pytest.raises(ValueError, match="on_nonfinite must be one of record, skip, rollback, raise"):
        nanscope.record(model, tmp_path / "a.nsrun", optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                        on_nonfinite="ignore")
    with pytest.raises(ValueError, match="needs the optimizer"):
        nanscope.record(model, tmp_path / "b.nsrun", on_nonfinite="skip")


def test_a_scheduler_made_first_hears_no_false_warning_under_a_guard(tmp_path: Path) -> None:
    model, x, y = model_and_data()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with nanscope.record(model, tmp_path / "s.nsrun", optimizer=optimizer, on_nonfinite="skip") as rec:
            for step in range(4):
                batch = torch.arange(16 + 8 * step, 24 + 8 * step)
                rec.step(one_step(model, optimizer, x[batch], y[batch]))
                scheduler.step()
    assert [str(w.message) for w in caught if "overridden" in str(w.message)] == []
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.001)


@pytest.mark.parametrize("content, refused", [
    (b"#!/usr/bin/env python3\nprint('my script')\n", True),
    (b"SQLite format 3\x00" + bytes(84), True),  # a database, but not a run file
    (b"", False),  # nothing to lose
])
def test_a_file_that_is_not_a_run_file_is_not_replaced(tmp_path: Path, content: bytes, refused: bool) -> None:
    model, x, y = model_and_data()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    if refused:
        with pytest.raises(FileExistsError, match=r"^nanscope\.record: .*notes\.txt exists and is not a NaNScope run "
                                                  r"file: not replaced \(to replace it on purpose: overwrite=True\)"):
            nanscope.record(model, path, optimizer=optimizer)
        assert path.read_bytes() == content and not model._forward_hooks
    with nanscope.record(model, path, optimizer=optimizer, overwrite=refused) as rec:
        rec.step(one_step(model, optimizer, x[:8], y[:8]))
    assert report(path)["steps_run"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # nothing left beside it


def test_a_run_file_is_replaced_by_a_new_run(tmp_path: Path) -> None:
    model, x, y = model_and_data()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    path = tmp_path / "run.nsrun"
    for steps in (3, 1):
        with nanscope.record(model, path, optimizer=optimizer) as rec:
            for _ in range(steps):
                rec.step(one_step(model, optimizer, x[:8], y[:8]))
    assert report(path)["steps_run"] == 1
