"""The recorder's benchmark (python/benchmarks/bench_recorder.py) runs and prints what
docs/benchmarks.md quotes: a row a model with three timings and ratios that are theirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_recorder.py"


def run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(SCRIPT.parents[1]))
    return subprocess.run([sys.executable, str(SCRIPT), *args], env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_row_a_model_with_its_own_ratios() -> None:
    done = run("--rounds", "1", "--steps", "2", "--models", "mlp,deep")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()[2:]}
    assert set(rows) == {"mlp", "deep"}
    for cells in rows.values():
        plain, isnan, recorder = (float(c) for c in cells[:3])
        ratios = [float(c.rstrip("x")) for c in cells[3:6]]
        assert min(plain, isnan, recorder) > 0
        # From the unrounded timings: within the printed timings' rounding.
        assert ratios == pytest.approx([isnan / plain, recorder / plain, recorder / isnan], abs=2e-3)


def test_syncs_want_cuda() -> None:
    done = run("--syncs")
    assert done.returncode == 2
    assert "--syncs counts CUDA synchronisations: use it with --device cuda" in done.stderr
