"""What a Python-recorded file keeps (docs/run-file.md, "Layer detail"): its chunks, checked against
its own steps in plain SQL, and its coarse chunks against its chunks; every non-finite step and its lead-up in full and samples of the rest,
as the C++ recorder keeps them; a budget that thins the samples only; bad ``keep`` arguments."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any, Callable, List, Optional, Set

import pytest
import torch
from torch import nn

import nanscope
from conftest import report
from nanscope.retention import FIRST_STEPS, LEAD_UP_STEPS, SAMPLE_EVERY


def guarded_loop(path: Path, steps: int, bad_steps: Set[int], keep: Any = "auto", hidden: int = 0,
                 after_step: Optional[Callable[[nanscope.Recorder, int], None]] = None) -> int:
    """A small classifier (`hidden` more hidden layers) whose batch holds a NaN at `bad_steps`; the
    loop skips the update of a non-finite loss, as careful loops do, so the model stays finite.
    `after_step(rec, step)` runs after each step, inside the recording. Returns the layer count."""
    torch.manual_seed(1)
    deeper = [m for _ in range(hidden) for m in (nn.Linear(8, 8), nn.Tanh())]
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), *deeper, nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    with nanscope.record(model, path, optimizer=optimizer, keep=keep) as rec:
        for step in range(steps):
            batch = x.clone()
            if step in bad_steps:
                batch[3, 1] = float("nan")
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(batch), y)
            loss.backward()
            if torch.isfinite(loss):
                optimizer.step()
            rec.step(loss)
            if after_step is not None:
                after_step(rec, step)
    return len(rec.layers)


def query(path: Path, sql: str, *args: Any) -> List[tuple]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def details(path: Path) -> List[Optional[str]]:
    return [d for (d,) in query(path, "SELECT layer_detail FROM steps ORDER BY step")]


def test_chunks_are_the_fold_of_the_steps(tmp_path: Path) -> None:
    path = tmp_path / "chunks.nsrun"
    layers = guarded_loop(path, 200, {70, 71, 150})
    chunks = query(path, "SELECT chunk, first_step, last_step, steps, first_origin_step, nonfinite_steps, step_ms "
                         "FROM chunks ORDER BY chunk")
    assert [c[:4] for c in chunks] == [(0, 0, 63, 64), (1, 64, 127, 64), (2, 128, 191, 64), (3, 192, 199, 8)]
    for chunk, first, last, count, first_origin, nonfinite, step_ms in chunks:
        origins = [s for (s,) in query(path, "SELECT step FROM steps WHERE step BETWEEN ? AND ? AND "
                                             "origin_phase IS NOT NULL ORDER BY step", first, last)]
        assert nonfinite == len(origins)
        assert first_origin == (origins[0] if origins else None)
        assert step_ms == pytest.approx(query(path, "SELECT sum(step_ms) FROM steps WHERE step BETWEEN ? AND ?",
                                              first, last)[0][0])
        # The loss series: extremes over the finite values, the first NaN.
        finite, low, high, bad_step = query(path, "SELECT count(*), min(loss), max(loss), "
                                                  "(SELECT min(step) FROM steps WHERE step BETWEEN ?1 AND ?2 AND "
                                                  "loss IS NULL) FROM steps WHERE step BETWEEN ?1 AND ?2 AND "
                                                  "loss IS NOT NULL", first, last)[0]
        assert query(path, "SELECT count, finite, min, max, first_nonfinite_step FROM chunk_series "
                           "WHERE chunk = ? AND series = 'loss'", chunk) == [(count, finite, low, high, bad_step)]
        # Each layer's map cell: the largest magnitude, the worst step, the steps it went non-finite.
        for layer in range(layers):
            absmax, norm = query(path, "SELECT max(absmax), max(norm) FROM layer_health WHERE layer = ? AND "
                                       "kind = 'forward' AND step BETWEEN ? AND ?", layer, first, last)[0]
            bad = [s for (s,) in query(path, "SELECT DISTINCT step FROM layer_nonfinite WHERE layer = ? AND kind IN "
                                             "('forward', 'grad') AND step BETWEEN ? AND ? ORDER BY step",
                                       layer, first, last)]
            row = query(path, "SELECT forward_absmax, forward_norm, nonfinite_steps, first_nonfinite FROM "
                              "chunk_layers WHERE chunk = ? AND layer = ?", chunk, layer)
            assert row == [(absmax, norm, len(bad), bad[0] if bad else None)], (chunk, layer)
    assert chunks[1][5] == 2 and chunks[2][5] == 1  # the NaN batches


def test_a_long_loop_keeps_every_nonfinite_step_and_its_lead_up(tmp_path: Path) -> None:
    path = tmp_path / "long.nsrun"
    bad = {1200, 1230, 1390}
    layers = guarded_loop(path, 1500, bad)
    kept = details(path)
    assert len(kept) == 1500
    for step, detail in enumerate(kept):
        lead_up = any(b - LEAD_UP_STEPS <= step < b for b in bad)
        expected = ("first" if step < FIRST_STEPS else "nonfinite" if step in bad else "lead-up" if lead_up
                    else "sample" if step % SAMPLE_EVERY == 0 else "none")
        assert detail == expected, step
    assert query(path, "SELECT count(*) FROM layer_steps")[0][0] == sum(d != "none" for d in kept) * layers
    keep = json.loads(query(path, "SELECT keep FROM run")[0][0])
    assert (keep["policy"], keep["sample_every"]) == ("auto", SAMPLE_EVERY)
    # Each coarse chunk (1,024 steps) is its 16 chunks folded.
    assert query(path, "SELECT chunk, first_step, last_step, steps, nonfinite_steps, first_origin_step "
                       "FROM coarse_chunks ORDER BY chunk") == \
        query(path, "SELECT chunk / 16, min(first_step), max(last_step), sum(steps), sum(nonfinite_steps), "
                    "min(first_origin_step) FROM chunks GROUP BY chunk / 16 ORDER BY chunk / 16")
    assert query(path, "SELECT chunk, count, finite, min, max, first_nonfinite_step FROM coarse_chunk_series "
                       "WHERE series = 'loss' ORDER BY chunk") == \
        query(path, "SELECT chunk / 16, sum(count), sum(finite), min(min), max(max), min(first_nonfinite_step) "
                    "FROM chunk_series WHERE series = 'loss' GROUP BY chunk / 16 ORDER BY chunk / 16")
    assert query(path, "SELECT chunk, layer, forward_absmax, grad_norm, nonfinite_steps, first_nonfinite FROM "
                       "coarse_chunk_layers ORDER BY chunk, layer") == \
        query(path, "SELECT chunk / 16, layer, max(forward_absmax), max(grad_norm), sum(nonfinite_steps), "
                    "min(first_nonfinite) FROM chunk_layers GROUP BY chunk / 16, layer ORDER BY chunk / 16, layer")
    # The C++ reader counts what the loop saw, thinned steps and all.
    summary = report(path)
    assert summary["nonfinite_steps"] == 3 and summary["first_nonfinite_step"] == 1200
    assert summary["steps_run"] == 1500


def test_keep_all_keeps_every_step(tmp_path: Path) -> None:
    path = tmp_path / "all.nsrun"
    layers = guarded_loop(path, 1100, {1050}, keep="all")
    assert set(details(path)) == {None}
    assert query(path, "SELECT count(*) FROM layer_steps")[0][0] == 1100 * layers
    assert json.loads(query(path, "SELECT keep FROM run")[0][0])["policy"] == "all"


def test_a_budget_thins_the_samples_only(tmp_path: Path) -> None:
    path = tmp_path / "budget.nsrun"
    bad = {2500}
    layers = guarded_loop(path, 3000, bad, keep="1MiB", hidden=3)  # 10 layers: about 1.6 MB unthinned
    keep = json.loads(query(path, "SELECT keep FROM run")[0][0])
    assert keep["policy"] == "1MiB" and keep["budget_bytes"] == 1 << 20
    every = keep["sample_every"]
    assert every > SAMPLE_EVERY
    assert query(path, "SELECT count(*) FROM steps WHERE layer_detail = 'sample' AND step % ? != 0", every)[0][0] == 0
    assert query(path, "SELECT count(*) FROM steps WHERE layer_detail IN ('nonfinite', 'lead-up')")[0][0] == \
        LEAD_UP_STEPS + 1
    assert query(path, "SELECT count(*) FROM layer_steps")[0][0] == \
        query(path, "SELECT count(*) FROM steps WHERE layer_detail != 'none'")[0][0] * layers
    assert query(path, "SELECT count(*) FROM chunks")[0][0] == math.ceil(3000 / 64)


@pytest.mark.parametrize("keep, error", [("lots", ValueError), ("512KiB", ValueError), ("-2GiB", ValueError),
                                         (3.5, TypeError), (True, TypeError)])
def test_a_bad_keep_is_refused(tmp_path: Path, keep: Any, error: type) -> None:
    model = nn.Linear(2, 1)
    with pytest.raises(error, match="keep"):
        nanscope.record(model, tmp_path / "bad.nsrun", keep=keep)
    assert not (tmp_path / "bad.nsrun").exists()


def test_a_file_being_written_holds_its_filling_chunk(tmp_path: Path) -> None:
    """A follower reading the file mid-run finds the chunk of the newest steps, thinned or not: the
    C++ reader fills a thinned step's layers from it (``withChunkLayers``)."""
    path = tmp_path / "filling.nsrun"

    def look(rec: nanscope.Recorder, step: int) -> None:
        if step in (1093, 1099):
            rec.flush()
            # Chunk 17 holds steps 1088.. so far, each folded in.
            assert query(path, "SELECT first_step, last_step, steps FROM chunks WHERE chunk = 17") == \
                [(1088, step, step - 1087)]
            assert query(path, "SELECT layer_detail FROM steps WHERE step = ?", step) == [("none",)]
            assert query(path, "SELECT count(*) FROM chunk_layers WHERE chunk = 17")[0][0] == len(rec.layers)

    guarded_loop(path, 1100, set(), after_step=look)
    assert query(path, "SELECT last_step, steps FROM chunks WHERE chunk = 17") == [(1099, 12)]
