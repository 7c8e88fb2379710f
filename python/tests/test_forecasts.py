"""The C++ forecasts, ported: the rule as the README states it, on a series worked out by hand,
and on a real diverging loop, whose overflow is forecast before it happens."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import nanscope
from conftest import regression, train
from nanscope.forecast import Track, follow, overflow_message


def test_a_value_growing_a_hundredfold_a_step_is_forecast_once() -> None:
    # log10 = 0, 2, 4, ...: from 9.63 (a quarter of the way to log10(3.4e38) = 38.53) the fitted
    # slope (2 decades a step) reaches the top in (38.53 - 10) / 2 = 14.3 steps: within 50.
    t = Track()
    top = 38.531839444989586
    found = [follow(t, step, 2.0 * step, top, 0.25) for step in range(12)]
    assert [step for step, f in enumerate(found) if f] == [5]
    growth, steps_left = found[5]
    assert abs(growth - 2.0) < 1e-9
    said = overflow_message("output", "fc2", growth, steps_left, "fp32")
    assert (said.id, said.args) == ("overflow-output", ["fc2", "1e+02", "fp32", "14"])
    assert said.text() == "fc2 output grows x1e+02 a step: fp32 overflow in about 14 steps"
    one = overflow_message("loss", "", growth, 0.6, "fp32")
    assert (one.id, one.text()) == ("overflow-loss-1", "the loss grows x1e+02 a step: fp32 overflow in about 1 step")


def test_noise_is_not_growth() -> None:
    t = Track()
    values = [20.0, 20.3, 19.9, 20.2, 20.0, 20.4, 19.8, 20.1]
    assert not any(follow(t, step, v, 38.5, 0.25) for step, v in enumerate(values))


def test_a_diverging_loop_is_warned_of_before_it_overflows(tmp_path: Path) -> None:
    model, optimizer, x, y = regression(0.5)
    path = tmp_path / "diverge.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        train(model, optimizer, x, y, 30, rec)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    first = db.execute("SELECT min(step) FROM steps WHERE origin_phase IS NOT NULL").fetchone()[0]
    grows = db.execute("SELECT step, text, message FROM events WHERE kind = 'warning' AND text LIKE '% grows x%'"
                       ).fetchall()
    assert first is not None and grows
    assert min(step for step, _, _ in grows) < first
    # Each carries the C++ message id the window translates, with the arguments the English was made of.
    assert all(json.loads(message)["id"].startswith("overflow-") for _, _, message in grows)
