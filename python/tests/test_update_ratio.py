"""Update ratios |dw| / |w| and the warning they feed, against what plain torch computes."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Dict, List

import torch
from torch import nn

import nanscope


def test_update_ratios_and_the_warning_on_the_third_large_update(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.3)  # large enough to move fc weights wholesale
    x = torch.randn(32, 4)
    y = x.sum(dim=1, keepdim=True) * 20
    names = {name: module for name, module in model.named_modules() if list(module.parameters(recurse=False))}
    expected: List[Dict[str, float]] = []
    path = tmp_path / "ratios.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        for _ in range(8):
            before = {n: torch.cat([p.detach().reshape(-1).clone() for p in m.parameters(recurse=False)])
                      for n, m in names.items()}
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            after = {n: torch.cat([p.detach().reshape(-1) for p in m.parameters(recurse=False)]) for n, m in names.items()}
            expected.append({n: float((after[n] - before[n]).norm() / before[n].norm()) for n in names})
            rec.step(loss)
            if not math.isfinite(loss.item()):
                break
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    got = db.execute("SELECT d.step, l.path, d.update_ratio FROM layer_steps_decoded d JOIN layers l ON l.id = d.layer "
                     "WHERE d.update_ratio IS NOT NULL ORDER BY d.step, d.layer").fetchall()
    assert {(step, name) for step, name, _ in got} == {(s, n) for s in range(len(expected)) for n in names}
    for step, name, ratio in got:
        assert math.isclose(ratio, expected[step][name], rel_tol=1e-4), (step, name)
    # The warning's step, by the rule the README states: |dw| / |w| >= 1 three steps running, once.
    due = {}
    for n in names:
        running = 0
        for step, ratios in enumerate(expected):
            running = running + 1 if ratios[n] >= 1.0 else 0
            if running == 3 and n not in due:
                due[n] = step
    warnings = db.execute("SELECT e.step, l.path FROM events e JOIN layers l ON l.id = e.layer "
                          "WHERE e.kind = 'warning'").fetchall()
    assert due, "the learning rate should make at least one layer's updates large"
    assert sorted(warnings) == sorted((step, n) for n, step in due.items())
