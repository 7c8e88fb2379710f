"""Steering a running loop from another process: ``nanscope steer`` (the C++ command line) asks, the
loop (``nanscope.record`` in a subprocess) applies or refuses and acknowledges in the run file."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

import pytest

from conftest import report, run_cli

LOOP = Path(__file__).resolve().parent / "steered_loop.py"  # a loop slow enough to steer


def start_loop(tmp_path: Path, policy: str = "pause", timeout: float = 60.0, default: str = "skip",
               steps: int = 2, nan_at: Sequence[int] = (1,)) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(LOOP), str(tmp_path / "run.nsrun"), policy, str(steps),
                             ",".join(str(s) for s in nan_at) or "-", str(timeout), default], cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def query(path: Path, sql: str) -> List[tuple]:
    """The rows of ``sql`` in the run file ``path``; none while it or its schema is not there yet."""
    if not path.exists():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    except sqlite3.OperationalError:  # the file's schema not written yet
        return []
    finally:
        db.close()


def wait_for(path: Path, sql: str, loop: subprocess.Popen, seconds: float = 60.0) -> List[tuple]:
    """The rows of ``sql`` once there are some, while the loop runs."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rows = query(path, sql)
        if rows:
            return rows
        if loop.poll() is not None:
            raise AssertionError(f"the loop ended first: {loop.stderr.read() if loop.stderr else ''}")
        time.sleep(0.1)
    raise AssertionError(f"nothing for {sql} within {seconds} s")


def finish(loop: subprocess.Popen) -> List[Dict[str, Any]]:
    out, err = loop.communicate(timeout=120)
    assert loop.returncode == 0, err
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("decision, skipped, rolled_back, finite_after", [
    ("continue", 0, 0, False),  # the update ran: NaN reached the weights, as asked
    ("skip", 1, 0, True),
    ("rollback", 1, 1, True),
    ("stop", 1, 0, True),
])
def test_a_paused_step_takes_the_decision_from_the_command_line(tmp_path: Path, decision: str, skipped: int,
                                                                 rolled_back: int, finite_after: bool) -> None:
    path = tmp_path / "run.nsrun"
    loop = start_loop(tmp_path)
    try:
        assert wait_for(path, "SELECT step FROM events WHERE kind = 'paused'", loop) == [(1,)]
        steered = run_cli("steer", str(path), "--decide", decision)
    finally:
        lines = finish(loop)
    assert steered.stdout.startswith(f"step 1: decided: {decision}, after "), steered.stdout
    assert query(path, "SELECT skipped, rolled_back FROM steps WHERE step = 1") == [(skipped, rolled_back)]
    if decision == "stop":
        assert lines[-1] == {"stopped": 1, "finite": True}
        summary = report(path)
        assert summary["steps_run"] == 2 and summary["stopped_by_policy"] is True
    else:
        assert [line["finite"] for line in lines if line.get("step") == 1] == [finite_after]
        assert len(lines) == 2
    if decision == "rollback":
        assert query(path, "SELECT why FROM steps WHERE step = 1")[0][0] == (
            "non-finite gradients: restored the state of step 0 (parameters, buffers, optimizer), lr halved to 0.05")
    assert not (tmp_path / "run.nsrun.steer").exists()  # the run is over: nothing reads requests


def test_the_loop_goes_on_reading_requests_after_a_pause(tmp_path: Path) -> None:
    path = tmp_path / "run.nsrun"
    loop = start_loop(tmp_path, steps=60)
    try:
        wait_for(path, "SELECT step FROM events WHERE kind = 'paused'", loop)
        run_cli("steer", str(path), "--decide", "skip")
        later = run_cli("steer", str(path), "--lr", "0.02")
    finally:
        lines = finish(loop)
    at = int(later.stdout.split(":")[0].removeprefix("step "))
    assert 1 < at < 60
    assert [line["lr"] for line in lines] == [0.1] * at + [0.02] * (60 - at)


def test_a_pause_without_a_decision_takes_the_default_after_its_timeout(tmp_path: Path) -> None:
    path = tmp_path / "run.nsrun"
    loop = start_loop(tmp_path, timeout=1.0, default="skip")
    lines = finish(loop)
    assert len(lines) == 2 and all(line["finite"] for line in lines)
    events = query(path, "SELECT step, kind, text FROM events WHERE kind IN ('paused', 'recovery') ORDER BY id")
    assert events[0][:2] == (1, "paused")
    assert (1, "recovery", "no decision within 1 s: skip, as pause_default says") in events
    assert query(path, "SELECT skipped FROM steps WHERE step = 1") == [(1,)]


def test_a_learning_rate_change_reaches_the_loop_at_its_next_step(tmp_path: Path) -> None:
    path = tmp_path / "run.nsrun"
    nan_steps = list(range(81, 120, 8))
    loop = start_loop(tmp_path, policy="record", steps=120, nan_at=nan_steps)
    try:
        wait_for(path, "SELECT step FROM steps WHERE step >= 2", loop)
        steered = run_cli("steer", str(path), "--lr", "0.01", "--clip", "0.5", "--policy", "skip")
    finally:
        lines = finish(loop)
    changed = query(path, "SELECT step, control, old, new FROM control_changes ORDER BY rowid")
    at = changed[0][0]
    assert [c[1:] for c in changed] == [("lr", "0.1", "0.01"), ("clip", "off", "0.5"),
                                        ("on_nonfinite", "record", "skip")]
    assert steered.stdout == f"step {at}: lr 0.01, clip 0.5, on_nonfinite skip (request " + \
        steered.stdout.split("(request ")[1]
    assert [line["lr"] for line in lines if line["step"] < at] == [0.1] * at
    assert all(line["lr"] == 0.01 for line in lines if line["step"] >= at)
    # From then on the step's recorded rate is the new one, the gradients reach the update clipped,
    # and the NaN batches are skipped.
    assert query(path, f"SELECT DISTINCT lr FROM steps WHERE step >= {at}") == [(0.01,)]
    assert all(c <= 0.5 + 1e-6 for (c,) in query(path, f"SELECT grad_norm_clipped FROM steps WHERE step >= {at} "
                                                       "AND grad_norm_clipped IS NOT NULL"))
    assert at < 80, "steered too late to see a NaN batch after"
    assert query(path, f"SELECT step FROM steps WHERE step >= {at} AND skipped = 1") == [(s,) for s in nan_steps]


def test_requests_that_cannot_be_applied_are_refused_whole(tmp_path: Path) -> None:
    path = tmp_path / "run.nsrun"
    loop = start_loop(tmp_path, policy="record", steps=60, nan_at=())
    try:
        wait_for(path, "SELECT step FROM steps WHERE step >= 1", loop)
        not_paused = run_cli("steer", str(path), "--decide", "skip", check=False)
        run_id = json.loads(query(path, "SELECT config FROM run")[0][0])["recorder"]["run_id"]
        with open(tmp_path / "run.nsrun.steer", "a") as requests:
            requests.write("this is not json\n")
            requests.write(json.dumps({"format": 1, "run": run_id, "id": "half", "lr": 0.5, "clip": -1}) + "\n")
            requests.write(json.dumps({"format": 1, "run": "another-run", "id": "other", "lr": 0.5}) + "\n")
            requests.write(json.dumps({"format": 9, "run": run_id, "id": "newer", "lr": 0.5}) + "\n")
        refused = wait_for(path, "SELECT text FROM events WHERE kind = 'warning' AND text LIKE 'request newer%'", loop)
    finally:
        lines = finish(loop)
    assert not_paused.returncode == 1
    assert "the loop is not paused: a decision applies to a paused step" in not_paused.stderr
    texts = [t for (t,) in query(path, "SELECT text FROM events WHERE kind = 'warning' ORDER BY id")]
    assert any(t.startswith("request ? refused: not JSON") for t in texts), texts
    assert "request half refused: clip must be a finite number above 0, not -1" in texts
    assert "request other refused: for another run (the run file was replaced since)" in texts
    assert refused[0][0] == "request newer refused: a request of a newer NaNScope (format 9; this recorder reads 1)"
    assert all(line["lr"] == 0.1 for line in lines)  # nothing applied half
    assert query(path, "SELECT count(*) FROM control_changes") == [(0,)]


def test_steering_a_file_no_loop_reads_fails_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "run.nsrun"
    finish(start_loop(tmp_path, policy="record", steps=2, nan_at=()))
    finished = run_cli("steer", str(path), "--lr", "0.01", check=False)
    assert finished.returncode == 1 and "the run has finished: no loop reads it" in finished.stderr
    nothing = run_cli("steer", str(path), check=False)
    assert nothing.returncode == 2 and "nothing to ask" in nothing.stderr
    wrong = run_cli("steer", str(path), "--decide", "maybe", check=False)
    assert wrong.returncode == 2 and "--decide is continue|skip|rollback|stop, got 'maybe'" in wrong.stderr
