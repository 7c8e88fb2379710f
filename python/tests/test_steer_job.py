"""Steering a data-parallel job: ``nanscope steer FOLDER`` asks every rank of a two-rank
DistributedDataParallel job over Gloo, and the ranks apply it at one step, or their parameters
would part."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import torch.distributed as dist

from conftest import PYTHON_DIR, run_cli
from test_data_parallel import free_port
from test_steer import query

RANK_LOOP = textwrap.dedent("""
    import json, os, sys, time
    import torch
    import torch.distributed as dist
    from torch import nn
    sys.path.insert(0, sys.argv[2])
    import nanscope

    folder, policy, steps, nan_step = sys.argv[1], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    data = torch.Generator().manual_seed(100 + rank)
    with nanscope.record(ddp, folder, optimizer=optimizer, on_nonfinite=policy, pause_timeout=60) as rec:
        for step in range(steps):
            x = torch.randn(8, 4, generator=data)
            y = x.sum(1, keepdim=True)
            if rank == 1 and step == nan_step:
                x[2, 1] = float("nan")
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            lr = optimizer.param_groups[0]["lr"]
            optimizer.step()
            rec.step(loss)
            print(json.dumps({"step": step, "lr": lr}), flush=True)
            time.sleep(0.05)
    state = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    print(json.dumps({"params": state.tolist()}), flush=True)
    dist.destroy_process_group()
""")

pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="torch.distributed with Gloo is not available")


def start_job(tmp_path: Path, policy: str, steps: int, nan_step: int) -> List[subprocess.Popen]:
    script = tmp_path / "rank.py"
    script.write_text(RANK_LOOP)
    folder = tmp_path / "job"
    folder.mkdir()
    port = str(free_port())
    return [subprocess.Popen([sys.executable, str(script), str(folder), str(PYTHON_DIR), policy, str(steps),
                              str(nan_step)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={"PATH": "/usr/bin:/bin", "RANK": str(rank), "WORLD_SIZE": "2",
                                  "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}) for rank in (0, 1)]


def finish(ranks: List[subprocess.Popen]) -> List[List[Dict[str, Any]]]:
    outputs = [r.communicate(timeout=180) for r in ranks]
    assert [r.returncode for r in ranks] == [0, 0], [err for _, err in outputs]
    return [[json.loads(line) for line in out.splitlines() if line.startswith("{")] for out, _ in outputs]


def wait_until(paths: List[Path], sql: str, seconds: float = 90.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(query(p, sql) for p in paths):
            return
        time.sleep(0.1)
    raise AssertionError(f"no rows for {sql} in every rank's file within {seconds} s")


def steer_job(tmp_path: Path, policy: str, steps: int, nan_step: int, once: str,
              *request: str) -> Tuple[List[Path], subprocess.CompletedProcess, List[List[Dict[str, Any]]]]:
    """Runs the job, sends ``nanscope steer FOLDER REQUEST...`` once every rank's file has rows for
    the query ``once``; returns the ranks' files, what steer printed and each rank's lines."""
    ranks = start_job(tmp_path, policy, steps, nan_step)
    files = [tmp_path / "job" / f"rank-{r}.nsrun" for r in (0, 1)]
    try:
        wait_until(files, once)
        steered = run_cli("steer", str(tmp_path / "job"), *request)
    finally:
        lines = finish(ranks)
    return files, steered, lines


def test_a_decision_reaches_every_paused_rank(tmp_path: Path) -> None:
    # The all-reduce brings rank 1's NaN to both: both pause before the update of step 3.
    files, steered, lines = steer_job(tmp_path, "pause", 6, 3, "SELECT step FROM events WHERE kind = 'paused'",
                                      "--decide", "skip")
    assert sorted(line.split(":")[0] for line in steered.stdout.splitlines()) == ["rank 0", "rank 1"]
    for f in files:
        assert query(f, "SELECT step FROM events WHERE kind = 'paused'") == [(3,)]
        assert query(f, "SELECT step FROM steps WHERE skipped = 1") == [(3,)]
    params = [rank_lines[-1]["params"] for rank_lines in lines]
    assert params[0] == params[1]  # one model on both ranks
    assert all(v == v for v in params[0])  # and no NaN in it


def test_a_rate_change_lands_on_one_step_on_every_rank(tmp_path: Path) -> None:
    files, steered, lines = steer_job(tmp_path, "record", 100, -1, "SELECT step FROM steps WHERE step >= 2",
                                      "--lr", "0.01")
    changes = [query(f, "SELECT step, control, old, new FROM control_changes") for f in files]
    assert changes[0] == changes[1] and len(changes[0]) == 1, changes
    at, control, old, new = changes[0][0]
    assert (control, old, new) == ("lr", "0.05", "0.01") and at < 100
    assert f"rank 0: step {at}: lr 0.01" in steered.stdout and f"rank 1: step {at}: lr 0.01" in steered.stdout
    for rank_lines in lines:
        assert [line["lr"] for line in rank_lines if "step" in line] == [0.05] * at + [0.01] * (100 - at)
    assert lines[0][-1]["params"] == lines[1][-1]["params"]
