"""Each example in python/examples records a file that NaNScope reads, with the origin its lesson
is about."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest
import torch

from conftest import PYTHON_DIR, report


@pytest.mark.parametrize("example, steps, phase, layer", [
    ("diverging_regression", 40, "forward", "4"),  # the last Linear's output overflows first
    ("nan_samples", 8, "input", None),
    ("log_zero_loss", 20, "loss", None),
    ("sqrt_where_gate", 10, "backward", "1"),
    ("amp_gradscaler", 40, None, None),  # bf16 on the CPU, fp16 with a scaler on a GPU: no NaN
])
def test_an_example_records_its_lesson(tmp_path: Path, example: str, steps: int, phase: Optional[str],
                                       layer: Optional[str]) -> None:
    out = tmp_path / f"{example}.nsrun"
    done = subprocess.run([sys.executable, str(PYTHON_DIR / "examples" / f"{example}.py"), str(out)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(PYTHON_DIR)})
    assert done.returncode == 0, done.stderr
    s = report(out)
    assert s["source"] == f"{example}.py"
    assert s["steps_run"] == steps
    if example == "amp_gradscaler":  # autocast's dtype, not the parameters' fp32
        assert s["precision"] == ("fp16" if torch.cuda.is_available() else "bf16")
    if phase is None:
        assert s["first_nonfinite_step"] is None
    else:
        assert s["origin"]["phase"] == phase
        assert s["origin"]["layer"] == layer
