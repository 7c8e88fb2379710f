"""What the recorder's tests share: the C++ command line that reads their files back.

CTest runs these tests with NANSCOPE_CLI set to the built ``nanscope``; by hand,
``NANSCOPE_CLI=build/dev/app/nanscope python3 -m pytest python/tests``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
import torch
from torch import nn

PYTHON_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PYTHON_DIR))


def cli_path() -> str:
    path = os.environ.get("NANSCOPE_CLI", "")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("NANSCOPE_CLI must name the built nanscope executable (CTest sets it)")
    return path


def run_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([cli_path(), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    if check and done.returncode != 0:
        raise AssertionError(f"nanscope {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


def report(path: Path, failed_run: bool = False) -> Dict[str, Any]:
    """The summary as ``nanscope report --json`` reads it from the file (the C++ reader).

    ``failed_run``: the run ended in an error, which ``report`` says by exiting 1."""
    done = run_cli("report", str(path), "--json", check=not failed_run)
    assert done.returncode == (1 if failed_run else 0), done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line]
    summaries = [line for line in lines if line.get("type") == "summary"]
    assert len(summaries) == 1, lines
    return summaries[0]


def export_steps(path: Path, tmp_path: Path) -> List[Dict[str, str]]:
    """The steps as ``nanscope export --csv`` writes them (the C++ reader)."""
    out = tmp_path / (path.stem + ".csv")
    run_cli("export", str(path), "--csv", str(out))
    return list(csv.DictReader(io.StringIO(out.read_text())))


def regression(lr: float) -> Tuple[nn.Module, torch.optim.Optimizer, torch.Tensor, torch.Tensor]:
    """An MSE regression whose targets are ten times the inputs' sum: diverges at a large lr."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    x = torch.randn(32, 4)
    y = x.sum(dim=1, keepdim=True) * 10
    return model, torch.optim.SGD(model.parameters(), lr=lr), x, y


def one_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """One plain MSE training step; its loss."""
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def train(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor, steps: int,
          rec: Optional[Any] = None) -> List[float]:
    """`steps` plain training steps (each ended with `rec.step` when recording); the losses."""
    losses = []
    for _ in range(steps):
        loss = one_step(model, optimizer, x, y)
        losses.append(loss.item())
        if rec is not None:
            rec.step(loss)
    return losses


def assert_events_carry_messages(path: Path) -> List[Tuple[str, str, List[str]]]:
    """Every event the recorder wrote says its sentence as the C++ core would: a message id the
    core knows (format.json), and the English composed from its arguments, except an error's own
    text and the first non-finite step's origin (the window words it from the origin). Returns
    (kind, id, args) of each event with a message."""
    from nanscope import format as fmt
    from nanscope.messages import Message
    out = []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        for kind, text, message in db.execute("SELECT kind, text, message FROM events ORDER BY id"):
            if kind in ("error", "first-nonfinite"):
                assert message is None, (kind, message)
                continue
            assert message is not None, f"a {kind} event without a message id: {text}"
            said = json.loads(message)
            assert said["id"] in fmt.EVENT_MESSAGES, said
            assert Message(said["id"], said["args"]).text() == text
            out.append((kind, said["id"], said["args"]))
    return out
