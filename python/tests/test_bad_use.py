"""Bad use: one clear Python exception, nothing already written lost, the training unchanged."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

import nanscope
from conftest import PYTHON_DIR, one_step, report, run_cli


def small() -> tuple:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    return model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(8, 3), torch.randn(8, 1)


def test_an_unwritable_path_raises_at_once(tmp_path: Path) -> None:
    model, optimizer, _, _ = small()
    with pytest.raises(OSError, match="cannot write .*no-such-folder"):
        nanscope.record(model, tmp_path / "no-such-folder" / "run.nsrun", optimizer=optimizer)
    # The hooks went with it: the model trains as before.
    assert not model._forward_hooks and not model._forward_pre_hooks


def test_errors_continue_warns_once_and_training_goes_on(tmp_path: Path) -> None:
    model, optimizer, x, y = small()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with nanscope.record(model, tmp_path / "missing" / "run.nsrun", optimizer=optimizer,
                             errors="continue") as rec:
            for _ in range(3):
                rec.step(one_step(model, optimizer, x, y))
    assert len(caught) == 1
    assert "training goes on unrecorded" in str(caught[0].message)


@pytest.mark.parametrize("loss, error", [
    (torch.ones(3), ValueError),
    ("1.5", TypeError),
])
def test_a_loss_that_is_not_one_value_is_refused(tmp_path: Path, loss: object, error: type) -> None:
    model, optimizer, x, y = small()
    path = tmp_path / "run.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        rec.step(one_step(model, optimizer, x, y))
        with pytest.raises(error, match="step\\(loss\\)"):
            rec.step(loss)
        rec.step(one_step(model, optimizer, x, y))  # the recorder goes on
    assert report(path)["steps_run"] == 2


def test_step_after_close_raises(tmp_path: Path) -> None:
    model, optimizer, x, y = small()
    rec = nanscope.record(model, tmp_path / "run.nsrun", optimizer=optimizer)
    rec.close()
    rec.close()  # twice is fine
    with pytest.raises(nanscope.RecorderClosed):
        rec.step(one_step(model, optimizer, x, y))


def test_a_model_without_parameters_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no parameters"):
        nanscope.record(nn.ReLU(), tmp_path / "run.nsrun")


def test_a_run_file_of_a_newer_format_is_not_replaced(tmp_path: Path) -> None:
    model, optimizer, x, y = small()
    path = tmp_path / "newer.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        rec.step(one_step(model, optimizer, x, y))
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.close()
    before = path.read_bytes()
    with pytest.raises(OSError, match="newer NaNScope"):
        nanscope.record(model, path, optimizer=optimizer)
    assert path.read_bytes() == before


def test_an_exception_in_the_loop_leaves_a_finished_file_that_says_why(tmp_path: Path) -> None:
    model, optimizer, x, y = small()
    path = tmp_path / "raised.nsrun"
    with pytest.raises(KeyError):
        with nanscope.record(model, path, optimizer=optimizer) as rec:
            for step in range(5):
                rec.step(one_step(model, optimizer, x, y))
                if step == 2:
                    raise KeyError("batch")
    s = report(path, failed_run=True)
    assert s["steps_run"] == 3
    assert s["error"] == "KeyError: 'batch'"


SLOW_LOOP = textwrap.dedent("""
    import sys, time, torch
    from torch import nn
    sys.path.insert(0, sys.argv[2])
    import nanscope
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    rec = nanscope.record(model, sys.argv[1], optimizer=opt, name="slow")
    for step in range(100000):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        rec.step(loss)
        print(step, flush=True)
        time.sleep(0.01)
""")


def test_a_killed_recorder_leaves_a_file_that_reads_and_follows(tmp_path: Path) -> None:
    path = tmp_path / "killed.nsrun"
    child = subprocess.Popen([sys.executable, "-c", SLOW_LOOP, str(path), str(PYTHON_DIR)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        for line in child.stdout:  # wait until steps are surely committed (250 ms a commit)
            if int(line) >= 60:
                break
        # Read while it is written: the C++ reader sees an unfinished run with the steps so far.
        live = report(path)
        assert live["finished"] is False
        assert live["source"] == "slow"
        assert live["steps_run"] >= 20
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        assert child.stdout is not None
        child.stdout.close()
    s = report(path)
    assert s["finished"] is False
    assert s["steps_run"] >= live["steps_run"]
    # The steps read are whole and numbered from 0 without a gap.
    rows = sqlite3.connect(f"file:{path}?mode=ro", uri=True).execute("SELECT step FROM steps ORDER BY step").fetchall()
    assert [r[0] for r in rows] == list(range(len(rows)))
    assert run_cli("report", str(path)).stdout.startswith("recorded loop slow (nanscope.record)")


def test_a_folder_without_a_job_is_refused(tmp_path: Path) -> None:
    model, optimizer, _, _ = small()
    with pytest.MonkeyPatch.context() as m:
        for k in ("RANK", "WORLD_SIZE"):
            m.delenv(k, raising=False)
        with pytest.raises(OSError, match="RANK and WORLD_SIZE are not set"):
            nanscope.record(model, tmp_path, optimizer=optimizer)


def test_replay_says_in_one_line_why_a_finite_python_run_has_no_capsule(tmp_path: Path) -> None:
    model, optimizer, x, y = small()
    path = tmp_path / "run.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        rec.step(one_step(model, optimizer, x, y))
    done = run_cli("replay", str(path), check=False)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert "holds no capsule: nanscope.record keeps one of the first non-finite step" in done.stderr
