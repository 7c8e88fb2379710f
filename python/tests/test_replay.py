"""A recorded loop's failing step kept as a capsule and computed again (``nanscope.replay``, ``python
-m nanscope replay``), with truths the tests work out themselves: the row they made NaN, a plain
loop trained at the smaller rate, the weight they set beyond bfloat16's range."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest
import torch

import nanscope
import replay_loops as loops
from conftest import PYTHON_DIR, run_cli

LOOPS = str(Path(__file__).with_name("replay_loops.py"))


def python_replay(path: Path, *options: str, check: bool = True) -> subprocess.CompletedProcess:
    """``python -m nanscope replay`` in a process of its own: the model built again by the script."""
    done = subprocess.run([sys.executable, "-m", "nanscope", "replay", str(path), "--script", LOOPS, *options],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)})
    if check:
        assert done.returncode == 0, done.stderr
    return done


def what_if(result: Dict[str, Any]) -> Dict[str, bool]:
    return {w["change"]: w["finite"] for w in result["what_if"]}


def capsule_meta(path: Path, step: int) -> Dict[str, Any]:
    with sqlite3.connect(path) as db:
        return json.loads(db.execute("SELECT meta FROM capsules WHERE step = ?", (step,)).fetchone()[0])


def test_a_bad_sample_is_named_in_a_second_process_and_the_step_without_it_is_finite(tmp_path: Path) -> None:
    path = tmp_path / "bad.nsrun"
    model, optimizer = loops.build_model()
    losses = loops.record(str(path), model, optimizer, steps=4)
    assert loops.BAD_ROW in loops.rows(0) and math.isnan(losses[0])
    # Before any replay, the C++ side says how to run one.
    told = run_cli("replay", str(path), check=False)
    assert told.returncode == 1 and "has not been replayed yet" in told.stderr
    assert "python3 -m nanscope replay" in told.stderr

    result = json.loads(python_replay(path, "--json").stdout)
    assert result["step"] == 0 and result["capsule"] == "first-non-finite"
    assert result["verdict"] == "reproduced"
    assert result["origin"]["phase"] == "input"
    assert result["samples"] == [loops.BAD_ROW]
    changes = what_if(result)
    assert changes[f"without samples {loops.BAD_ROW}"] is True
    assert changes["lr=0.001"] is False and changes["clip=1"] is False  # no rate helps a NaN input

    # The C++ reader prints what the Python replay stored, as its own replay.
    cpp = json.loads(run_cli("replay", str(path), "--json").stdout)
    assert cpp["verdict"] == "reproduced" and cpp["samples"] == [loops.BAD_ROW]
    assert cpp["origin"]["phase"] == "input"
    assert {w["change"]: w["finite"] for w in cpp["what_if"]} == changes
    assert "computed by nanscope.replay" in run_cli("replay", str(path)).stdout
    assert "capsule: step 0 (first-non-finite)" in run_cli("report", str(path)).stdout


def test_a_divergence_is_kept_finite_by_the_smaller_rate_from_the_ring(tmp_path: Path) -> None:
    path = tmp_path / "diverge.nsrun"
    model, optimizer = loops.build_divergent()
    losses = loops.record(str(path), model, optimizer, steps=60, finite_rows=True)
    failing = next(i for i, v in enumerate(losses) if not math.isfinite(v))
    model, optimizer = loops.build_divergent()
    r = nanscope.replay(str(path), model, optimizer, loops.compute_loss)
    assert r.step == failing and r.reproduced
    assert r.samples == [] and any("no single row" in n for n in r.notes)
    start = capsule_meta(path, failing)["ring"]["step"]
    assert failing - 19 <= start <= failing - 10  # the older of the two latest kept states
    ring_rate = next(w for w in r.what_if if w.change == "lr=0.05")
    assert ring_rate.finite and ring_rate.start == "snapshot" and f"from step {start}" in ring_rate.note
    # The truth, from a plain loop: the same steps at a tenth of the rate from the ring's start on.
    truth = loops.plain_losses(loops.build_divergent, failing + 1, {start: 0.05})
    assert all(math.isfinite(v) for v in truth)
    assert not math.isfinite(loops.plain_losses(loops.build_divergent, failing + 1, {})[-1])


def test_fp32_avoids_an_overflow_of_bfloat16(tmp_path: Path) -> None:
    path = tmp_path / "bf16.nsrun"
    model, optimizer = loops.build_overflow()
    losses = loops.record(str(path), model, optimizer, steps=1, loss_of=loops.overflow_loss, finite_rows=True,
                          autocast=torch.bfloat16)
    assert math.isinf(losses[0])
    model, optimizer = loops.build_overflow()
    r = nanscope.replay(str(path), model, optimizer, loops.overflow_loss)
    assert r.reproduced and r.origin is not None
    assert (r.origin["phase"], r.origin["layer"]) == ("forward", "0")
    assert {w.change: w.finite for w in r.what_if}["precision=fp32"] is True
    assert r.samples == [] and any("every row alone" in n for n in r.notes)


def test_a_step_that_computes_differently_each_time_is_said_not_deterministic(tmp_path: Path) -> None:
    path = tmp_path / "noisy.nsrun"
    model, optimizer = loops.build_noisy()
    loops.record(str(path), model, optimizer, steps=3, finite_rows=True, capsule_at=[1])
    model, optimizer = loops.build_noisy()
    r = nanscope.replay(str(path), model, optimizer, loops.compute_loss, step=1)
    assert r.reason == "asked" and not r.reproduced
    assert "not deterministic" in r.differs


def test_a_capsule_replays_while_its_loop_still_records(tmp_path: Path) -> None:
    path = tmp_path / "live.nsrun"
    model, optimizer = loops.build_model()
    x, y = loops.data()
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for step in range(3):
            idx = loops.rows(step)
            optimizer.zero_grad()
            loss = loops.compute_loss(model, (x[idx], y[idx]))
            loss.backward()
            optimizer.step()
            rec.step(loss, samples=idx, batch=(x[idx], y[idx]))
        rec.flush()
        again, again_optimizer = loops.build_model()
        r = nanscope.replay(str(path), again, again_optimizer, loops.compute_loss)
        assert r.reproduced and r.samples == [loops.BAD_ROW]
    assert capsule_meta(path, 0)["replay"]["samples"] == [loops.BAD_ROW]  # the results outlived the writer


@pytest.mark.parametrize("case", ["another model", "no capsule", "compute_loss raises", "newer format",
                                  "without batch", "a loss without autograd"])
def test_bad_input_gets_one_clear_message_and_changes_nothing(tmp_path: Path, case: str) -> None:
    path = tmp_path / "run.nsrun"
    model, optimizer = loops.build_model()
    loops.record(str(path), model, optimizer, steps=2, capsules=case != "no capsule",
                 batch_given=case != "without batch")
    model, optimizer = loops.build_model()

    def raising(model: torch.nn.Module, batch: Any) -> torch.Tensor:
        raise KeyError("label")

    def without_autograd(model: torch.nn.Module, batch: Any) -> torch.Tensor:
        with torch.no_grad():
            return loops.compute_loss(model, batch)
    compute = {"compute_loss raises": raising, "a loss without autograd": without_autograd}.get(case,
                                                                                               loops.compute_loss)
    if case == "another model":
        model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                                    torch.nn.Linear(32, 1))
    if case == "newer format":
        with sqlite3.connect(path) as db:
            db.execute("UPDATE capsules SET meta = json_set(meta, '$.format', 2)")
    if case == "without batch":  # the model's first forward inputs stand in: model(*batch)
        r = nanscope.replay(str(path), model, optimizer, lambda m, batch: m(*batch).sum())
        assert r.samples == [loops.BAD_ROW] and any("no batch=" in n for n in r.notes)
        return
    before = sqlite3.connect(path).execute("SELECT meta FROM capsules").fetchall()
    expected = {"another model": (nanscope.ReplayError, "parameter '0.weight' has shape [32, 8], the capsule's [16, 8]"),
                "no capsule": (nanscope.CapsuleError, "holds no capsule"),
                "compute_loss raises": (nanscope.ReplayError, "KeyError: 'label'"),
                "newer format": (nanscope.CapsuleError, "newer format (2"),
                "a loss without autograd": (nanscope.ReplayError, "cannot be backpropagated")}[case]
    with pytest.raises(expected[0]) as raised:
        nanscope.replay(str(path), model, optimizer, compute)
    assert expected[1] in str(raised.value)
    assert sqlite3.connect(path).execute("SELECT meta FROM capsules").fetchall() == before


def test_a_capsule_too_large_for_the_file_is_written_beside_it(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nanscope.capsule, "IN_FILE_LIMIT", 1000)
    path = tmp_path / "big.nsrun"
    model, optimizer = loops.build_model()
    loops.record(str(path), model, optimizer, steps=2)
    beside = tmp_path / "big.nsrun.capsule-0"
    meta = capsule_meta(path, 0)
    assert meta["state_file"] == beside.name and beside.stat().st_size == meta["state_bytes"] > 1000
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT length(state), bytes > ? FROM capsules", (meta["state_bytes"],)).fetchone() == (0, 1)
        said = db.execute("SELECT text FROM events WHERE text LIKE 'capsule of step 0%'").fetchone()[0]
    assert f"written beside it as {beside.name}" in said
    listed = [line for line in run_cli("report", str(path)).stdout.splitlines() if line.startswith("capsule:")]
    assert len(listed) == 1 and listed[0].startswith("capsule: step 0 (first-non-finite), ")
    assert float(listed[0].split(", ")[1].split()[0]) * 1024 > meta["state_bytes"]  # the state beside counted
    model, optimizer = loops.build_model()
    assert nanscope.replay(str(path), model, optimizer, loops.compute_loss).samples == [loops.BAD_ROW]
    beside.unlink()  # the run file travelled alone
    with pytest.raises(nanscope.CapsuleError, match="kept beside the file"):
        nanscope.replay(str(path), model, optimizer, loops.compute_loss)


def test_a_time_first_dict_batch_names_its_sequence(tmp_path: Path) -> None:
    """A dict batch, time first, two parameter groups under a schedule: the bad sequence is found
    along the batch's dimension (1), and the replay starts from the rates the schedule had set."""
    path = tmp_path / "tagger.nsrun"
    loops.record_tagger(str(path), steps=6, bad=(4, 2))
    model, optimizer = loops.build_tagger()
    r = nanscope.replay(str(path), model, optimizer, loops.tagger_loss)
    assert r.step == 4 and r.reproduced, r.differs
    assert r.samples == [6 * 4 + 2]
    assert {w.change: w.finite for w in r.what_if}[f"without samples {6 * 4 + 2}"] is True
    assert capsule_meta(path, 4)["failing"]["lrs"] == [[3e-3 * 0.25, 1e-3 * 0.25]]
    assert not any("do not end in the weights" in n for n in r.notes)  # the ring reached step 4 exactly


def test_a_bad_sample_is_named_through_batchnorm(tmp_path: Path) -> None:
    """BatchNorm in training mode takes no batch of one row, and a NaN row poisons every row's
    normalisation: the bisection finishes with a finite row beside each candidate."""
    path = tmp_path / "normed.nsrun"
    model, optimizer = loops.build_normed()
    loops.record(str(path), model, optimizer, steps=2)
    model, optimizer = loops.build_normed()
    r = nanscope.replay(str(path), model, optimizer, loops.compute_loss)
    assert r.reproduced and r.samples == [loops.BAD_ROW]
    assert {w.change: w.finite for w in r.what_if}[f"without samples {loops.BAD_ROW}"] is True
