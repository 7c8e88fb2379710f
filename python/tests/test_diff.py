"""`nanscope diff` (the C++ reader) on files the Python recorder wrote: two recordings of one loop
are identical bit for bit, and a learning rate changed parts them where plain torch says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import torch
from torch import nn

import nanscope
from conftest import regression, run_cli, train


def recorded(path: Path, lr: float, steps: int = 6) -> Path:
    model, optimizer, x, y = regression(lr)
    with nanscope.record(model, path, optimizer=optimizer, name="regression") as rec:
        train(model, optimizer, x, y, steps, rec)
    return path


def diff(a: Path, b: Path) -> Dict[str, Any]:
    lines = [json.loads(line) for line in run_cli("diff", str(a), str(b), "--json").stdout.splitlines() if line]
    assert len(lines) == 1 and lines[0]["type"] == "diff", lines
    return lines[0]


def first_differing_output_step(lr_a: float, lr_b: float, steps: int) -> int:
    """Plain torch: the first step whose first layer's output differs between the two loops."""
    outputs = []
    for lr in (lr_a, lr_b):
        model, optimizer, x, y = regression(lr)
        seen = []
        for _ in range(steps):
            optimizer.zero_grad()
            out = model[0](x)
            seen.append(out.detach().clone())
            nn.functional.mse_loss(model[2](model[1](out)), y).backward()
            optimizer.step()
        outputs.append(seen)
    return next(s for s in range(steps) if not torch.equal(outputs[0][s], outputs[1][s]))


def test_a_loop_recorded_twice_is_identical(tmp_path: Path) -> None:
    d = diff(recorded(tmp_path / "a.nsrun", 0.01), recorded(tmp_path / "b.nsrun", 0.01))
    assert d["identical"] is True and d["parting"] is None
    # What differs between two recordings of one loop is when and where they ran, nothing else.
    assert {s["key"] for s in d["settings"]} <= {"recorder.argv", "recorder.script"}, d["settings"]


def test_a_learning_rate_changed_parts_them_where_torch_says(tmp_path: Path) -> None:
    d = diff(recorded(tmp_path / "a.nsrun", 0.01), recorded(tmp_path / "b.nsrun", 0.02))
    assert d["steps_compared"] == 6
    assert d["parting"]["step"] == first_differing_output_step(0.01, 0.02, 6) == 1
    assert (d["parting"]["what"], d["parting"]["layer"], d["parting"]["params_differ"]) == ("forward", "0", True)
    assert any(s["key"] == "recorder.optimizer_settings.lr" and (s["a"], s["b"]) == (0.01, 0.02)
               for s in d["settings"]), d["settings"]


def test_the_thread_count_is_a_setting_that_differs(tmp_path: Path) -> None:
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        a = recorded(tmp_path / "a.nsrun", 0.01)
        torch.set_num_threads(2)
        b = recorded(tmp_path / "b.nsrun", 0.01)
    finally:
        torch.set_num_threads(before)
    d = diff(a, b)
    assert [(s["a"], s["b"]) for s in d["settings"] if s["key"] == "threads"] == [(1, 2)], d["settings"]
    # NaNScope's own runs compute with one thread, and say so.
    c = tmp_path / "c.nsrun"
    run_cli("run", "--scenario", "large-lr-mse", "--steps", "2", "--record", str(c))
    assert [(s["a"], s["b"]) for s in diff(c, a)["settings"] if s["key"] == "threads"] == []
    assert [(s["a"], s["b"]) for s in diff(c, b)["settings"] if s["key"] == "threads"] == [(1, 2)]
