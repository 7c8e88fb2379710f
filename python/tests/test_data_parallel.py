"""A data-parallel job's ranks: each writes its own run file of the job's folder, and under
DistributedDataParallel each records its own gradients, so the rank where a NaN was born is named
although DDP averages it into every rank within the step."""

from __future__ import annotations

import json
import math
import os
import socket
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest
import torch.distributed as dist

from conftest import PYTHON_DIR, export_steps, report, run_cli

RANK_LOOP = textwrap.dedent("""
    import sys, torch
    from torch import nn
    sys.path.insert(0, sys.argv[2])
    import nanscope
    import os
    torch.manual_seed(int(os.environ["RANK"]))  # each rank seeded its own way: still one job
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    if os.environ["RANK"] == "1":
        x[2, 0] = float("nan")  # a bad sample in rank 1's shard
    with nanscope.record(model, sys.argv[1], optimizer=opt) as rec:
        for step in range(4):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            rec.step(loss)
""")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_ranks(folder: Path, args: List[str]) -> None:
    port = str(free_port())
    children = [subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 env={**os.environ, "RANK": str(rank), "WORLD_SIZE": "2",
                                      "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}) for rank in (0, 1)]
    outputs = [c.communicate(timeout=180)[0] for c in children]
    assert [c.returncode for c in children] == [0, 0], outputs


def test_a_jobs_ranks_write_a_run_folder_that_nanscope_reads(tmp_path: Path) -> None:
    folder = tmp_path / "job"
    folder.mkdir()
    start_ranks(folder, ["-c", RANK_LOOP, str(folder), str(PYTHON_DIR)])
    assert sorted(p.name for p in folder.iterdir()) == ["rank-0.nsrun", "rank-1.nsrun"]
    s0, s1 = report(folder / "rank-0.nsrun"), report(folder / "rank-1.nsrun")
    assert s0["first_nonfinite_step"] is None
    assert s1["first_nonfinite_step"] == 0 and s1["origin"]["phase"] == "input"
    # The folder reads as one job: each rank's report, in rank order.
    out = run_cli("report", str(folder)).stdout
    assert "rank 0" in out and "rank 1" in out, out


def job_line(folder: Path) -> Dict:
    lines = [json.loads(line) for line in run_cli("report", str(folder), "--json").stdout.splitlines() if line]
    return next(line for line in lines if line.get("type") == "job")


@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="torch without Gloo")
@pytest.mark.parametrize("bucket_view", [False, True], ids=["gradients-copied", "gradients-as-bucket-views"])
def test_ddp_names_the_rank_where_the_nan_was_born(tmp_path: Path, bucket_view: bool) -> None:
    folder = tmp_path / "job"
    folder.mkdir()
    start_ranks(folder, [str(Path(__file__).with_name("ddp_rank.py")), str(folder), str(PYTHON_DIR),
                         "1" if bucket_view else "0"])
    job = job_line(folder)
    assert (job["first_nonfinite_rank"], job["first_nonfinite_step"], job["phase"]) == (1, 3, "input")
    bad, good = report(folder / "rank-1.nsrun"), report(folder / "rank-0.nsrun")
    assert bad["origin"]["explanation"].endswith("(samples 58); every layer downstream only passes them on.")
    # Rank 0's own gradients were finite at step 3; its parameters took the job's NaN update.
    assert (good["first_nonfinite_step"], good["origin"]["phase"]) == (4, "update")
    assert "the all-reduce brought from another rank" in good["origin"]["explanation"]
    with sqlite3.connect(f"file:{folder / 'rank-0.nsrun'}?mode=ro", uri=True) as db:
        warned = db.execute("SELECT step FROM events WHERE kind = 'warning' AND text LIKE '%all-reduce%'").fetchall()
    assert warned == [(3,)]
    # Each rank's gradient norm is its own, before the averaging (DDP's bucket views hold the
    # averaged, or half-averaged, gradients by the end of backward).
    for rank, last_finite in ((0, 3), (1, 2)):
        own = json.loads((folder / f"expected-{rank}.json").read_text())
        recorded = [float(row["grad_norm"]) for row in export_steps(folder / f"rank-{rank}.nsrun", tmp_path)]
        assert recorded[:last_finite + 1] == pytest.approx(own[:last_finite + 1], rel=1e-5), rank
        assert math.isnan(recorded[last_finite + 1])
