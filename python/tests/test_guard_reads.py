"""A guard decides from the step's one host read: the read its decision makes is the step's, and
the loss and update ratios, which come after the update, are read with the next step's.

There is no GPU here, so the tests measure CPU tensors as a GPU's are (``health.DEFER_CPU``:
reduced to scalars, read in one copy) and let the probe hold steps on the CPU too
(``step_reader.HOLD_ON_CPU``); ``health.DEVICE_READS`` counts the copies a step makes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import List, Tuple

import pytest
import torch

import nanscope
from nanscope import health, step_reader
from conftest import one_step
from test_guard import BAD_ROW, model_and_data

STEPS = 24
BAD_STEPS = [1, 9, 17]  # the steps whose batch holds row BAD_ROW


def reads_a_step(path: Path, policy: str) -> List[int]:
    """Trains STEPS steps under ``policy``; how many reads each step made (its rec.step included)."""
    model, x, y = model_and_data()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    reads: List[int] = []
    # A pause with no one to decide takes its default (skip) at once.
    with nanscope.record(model, path, optimizer=optimizer, on_nonfinite=policy, pause_timeout=0) as rec:
        for step in range(STEPS):
            batch = torch.arange(8 * (step % 8), 8 * (step % 8) + 8)
            before = health.DEVICE_READS
            rec.step(one_step(model, optimizer, x[batch], y[batch]), samples=batch)
            reads.append(health.DEVICE_READS - before)
    assert [s for s in BAD_STEPS if BAD_ROW in range(8 * (s % 8), 8 * (s % 8) + 8)] == BAD_STEPS
    return reads


@pytest.fixture
def like_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "DEFER_CPU", True)
    monkeypatch.setattr(step_reader, "HOLD_ON_CPU", True)


@pytest.mark.parametrize("policy", ["skip", "rollback", "pause"])
def test_a_guarded_step_makes_one_read(tmp_path: Path, like_a_gpu: None, policy: str) -> None:
    reads = reads_a_step(tmp_path / f"{policy}.nsrun", policy)
    # A step the guard stops reads its loss on its own (it is not held: the loop may stop there).
    assert [s for s, n in enumerate(reads) if n != 1] == BAD_STEPS
    assert all(reads[s] == 2 for s in BAD_STEPS)


def test_unguarded_steps_make_one_read_too(tmp_path: Path, like_a_gpu: None) -> None:
    assert reads_a_step(tmp_path / "record.nsrun", "record") == [1] * STEPS


def test_without_holding_a_guarded_step_would_read_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What the count measures: the decision's read and the step end's, when nothing is held.
    monkeypatch.setattr(health, "DEFER_CPU", True)
    reads = reads_a_step(tmp_path / "twice.nsrun", "skip")
    assert set(reads) == {2}


def file_rows(path: Path) -> Tuple[list, list, list]:
    """What a run file says of its steps, layers and events, less the times it measured."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        steps = db.execute("SELECT * FROM steps ORDER BY step").fetchall()
        names = [d[0] for d in db.execute("SELECT * FROM steps LIMIT 0").description]
        at = names.index("step_ms")
        steps = [row[:at] + row[at + 1:] for row in steps]
        layers = db.execute("SELECT * FROM layer_steps ORDER BY key").fetchall()
        events = db.execute("SELECT step, kind, layer, text FROM events WHERE kind != 'info' ORDER BY id").fetchall()
        return steps, layers, events
    finally:
        db.close()


@pytest.mark.parametrize("policy", ["skip", "rollback"])
def test_held_steps_are_recorded_as_steps_read_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       policy: str) -> None:
    monkeypatch.setattr(health, "DEFER_CPU", True)
    reads_a_step(tmp_path / "at-once.nsrun", policy)
    monkeypatch.setattr(step_reader, "HOLD_ON_CPU", True)
    reads_a_step(tmp_path / "held.nsrun", policy)
    at_once, held = file_rows(tmp_path / "at-once.nsrun"), file_rows(tmp_path / "held.nsrun")
    assert len(held[0]) == STEPS and len(held[1]) > 0
    assert held == at_once  # losses, update ratios, origins, events: the same bits


def test_a_flush_and_the_summary_record_the_held_step(tmp_path: Path, like_a_gpu: None) -> None:
    model, x, y = model_and_data()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    path = tmp_path / "flushed.nsrun"
    with nanscope.record(model, path, optimizer=optimizer, on_nonfinite="skip") as rec:
        for step in range(4):
            loss = one_step(model, optimizer, x[16:24], y[16:24])
            rec.step(loss)
            if step == 2:
                assert rec.summary()["steps_run"] == 3
        rec.flush()
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        recorded = db.execute("SELECT step, loss FROM steps ORDER BY step").fetchall()
        db.close()
        assert [s for s, _ in recorded] == [0, 1, 2, 3]
        assert recorded[-1][1] == pytest.approx(float(loss), rel=1e-7)
