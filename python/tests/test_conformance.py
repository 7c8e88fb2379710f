"""One truth across the two languages: the C++ rules' answers, written by ``nanscope_conformance``
(tools/conformance) from synthetic step records, replayed through the Python rules. The corpus is
this build's, made afresh by the test, so a rule changed on either side alone fails here: the
forecasts and warnings (TrendForecast, in their order), a step's fate (failed, born in a layer),
the chunk rows a run file gets (StepChunk), the steps whose layer rows it keeps
(LayerDetailRetention), what its summary counts (StepTally), and each step's origin and its
sentence (findOrigin, explainOrigin) for a chain of modules in a container."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

import conftest
from nanscope import format as fmt
from nanscope.chunks import StepChunk, StepFacts, step_fate
from nanscope.forecast import TrendForecast
from nanscope.health import Health
from nanscope.origin import Call, GradEvent, Layer, LayerHealth, Origin, explain, find_origin
from nanscope.retention import KeepPolicy, Retention
from nanscope.tally import StepTally


def conformance_program() -> str:
    """``NANSCOPE_CONFORMANCE`` (CTest sets it), else the one built beside ``NANSCOPE_CLI``."""
    path = os.environ.get("NANSCOPE_CONFORMANCE") or str(
        Path(conftest.cli_path()).resolve().parents[1] / "tools" / "conformance" / "nanscope_conformance")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path}: NANSCOPE_CONFORMANCE must name the built nanscope_conformance (CTest sets it)")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Dict[str, Any]]:
    out = tmp_path_factory.mktemp("conformance") / "corpus.json"
    subprocess.run([conformance_program(), str(out)], check=True, timeout=120)
    written = json.loads(out.read_text())
    cases: Dict[str, Any] = {case["name"]: case for case in written["cases"]}
    cases["__retention__"] = written["retention"]
    return cases


CASES = ["overflow-fp32", "vanishing-fp16", "vanishing-bf16", "updates", "loss-scale", "noisy-growth", "origins",
         "noise"]


def number(v: Any) -> float:
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v) if isinstance(v, str) else v


def health(a: List[Any]) -> Health:
    """[present, numel, nan, posinf, neginf, min, max, absmax, norm] as the corpus writes a TensorHealth."""
    return Health(present=a[0], numel=a[1], nan=a[2], posinf=a[3], neginf=a[4], min=number(a[5]), max=number(a[6]),
                  norm=number(a[8]))


def layer_healths(record: Dict[str, Any]) -> List[LayerHealth]:
    return [LayerHealth(forward=health(f), grad=health(g), params=health(p), param_grads=health(pg), input_finite=ok,
                        update_ratio=number(ratio)) for f, g, p, pg, ok, ratio in record["layers"]]


def fate(record: Dict[str, Any]) -> tuple:
    origin = record["origin"] or {"phase": "", "layer": -1, "produced": False}
    return step_fate(origin["phase"], origin["layer"], origin["produced"], record["loss_scaling"],
                     bool(record["overflow_layers"]), number(record["loss_scale"]))


def test_the_corpus_covers_every_rule(corpus: Dict[str, Dict[str, Any]]) -> None:
    """Not a corpus that passes by saying nothing: it names its cases, and they raise warnings of
    each kind, fail steps, absorb overflows, keep lead-ups and thin samples."""
    assert sorted(corpus) == sorted(CASES + ["__retention__"])
    retention = corpus
    corpus = {name: case for name, case in corpus.items() if name in CASES}
    ids = {w[2].rstrip("-1") for case in corpus.values() for w in case["warnings"]}
    assert {"overflow-output", "overflow-loss", "vanishing-output", "vanishing-gradient", "updates-large",
            "updates-tiny", "loss-scale-falling"} <= ids
    records = [r for case in corpus.values() for r in case["records"]]
    assert any(r["failed"] for r in records) and any(r["origin"] and not r["failed"] for r in records)
    origins = [r["origin"] for r in records if r["origin"]]
    assert {o["phase"] for o in origins} == set(fmt.PHASES) and not all(o["produced"] for o in origins)
    assert len({(o["phase"], o["layer"]) for o in origins if o["phase"] == "backward"}) == 3  # fc1, fc2, loss
    assert all(len(case["chunks"]["chunks"]) == 2 for case in corpus.values())  # past a chunk's end
    calls = [c for case in retention["__retention__"] for c in case["calls"]]
    assert any(c[0] == "event" and c[3] for c in calls) and any(c[0] == "thin" for c in calls)
    assert any(d[2] for c in calls if c[0] == "event" for d in c[3])  # a sample relabelled in a lead-up


@pytest.mark.parametrize("name", CASES)
def test_the_same_warnings_in_the_same_order(corpus: Dict[str, Dict[str, Any]], name: str) -> None:
    case = corpus[name]
    layers = [Layer(*layer) for layer in case["layers"]]
    forecast = TrendForecast(layers, horizon=case["horizon"])
    said = []
    for r in case["records"]:
        for layer, message in forecast.add(r["step"], layer_healths(r), number(r["loss"]), health(r["loss_health"]),
                                           case["precision"], number(r["lr"]), r["loss_scaling"],
                                           number(r["loss_scale"]), fate(r)[0]):
            said.append([r["step"], layer, message.id, message.args])
    assert said == case["warnings"]


@pytest.mark.parametrize("name", CASES)
def test_the_same_fate_of_each_step(corpus: Dict[str, Dict[str, Any]], name: str) -> None:
    records = corpus[name]["records"]
    assert [fate(r) for r in records] == [(r["failed"], r["born_in_layer"]) for r in records]


def table_rows(db: sqlite3.Connection, table: str, order: str) -> List[List[Any]]:
    """Every row as the corpus writes SQLite's values: NULL, integers, reals (Inf as a string), text."""
    columns = [c for (c,) in db.execute(f"SELECT name FROM pragma_table_info('{table}')")]
    select = ", ".join(f"typeof({c}), {c}" for c in columns)
    rows = []
    for values in db.execute(f"SELECT {select} FROM {table} ORDER BY {order}"):
        rows.append([fmt.number_json(v) if kind == "real" else v for kind, v in zip(values[::2], values[1::2])])
    return rows


@pytest.mark.parametrize("name", CASES)
def test_the_same_chunk_rows(corpus: Dict[str, Dict[str, Any]], name: str) -> None:
    case = corpus[name]
    count = len(case["layers"])
    db = sqlite3.connect(":memory:")
    for statement in fmt.SCHEMA:
        db.execute(statement)
    chunk = StepChunk(0, count)
    for r in case["records"]:
        if r["step"] // fmt.CHUNK_STEPS != chunk.index:
            for sql, rows in chunk.rows():
                db.executemany(sql, rows)
            chunk = StepChunk(r["step"] // fmt.CHUNK_STEPS, count)
        failed, born = fate(r)
        chunk.add(StepFacts(step=r["step"], series=[number(r[s]) for s in fmt.CHUNK_SERIES[:-1]],
                            loss_scale=number(r["loss_scale"]), skipped=r["skipped"], step_ms=number(r["step_ms"]),
                            nonfinite=r["origin"] is not None, failed=failed, born_in_layer=born,
                            scaler_skipped=bool(r["overflow_layers"]), quarantined=r["quarantined"]),
                  layer_healths(r))
    for sql, rows in chunk.rows():
        db.executemany(sql, rows)
    expected = case["chunks"]
    assert table_rows(db, "chunks", "chunk") == expected["chunks"]
    assert table_rows(db, "chunk_series", "chunk, series") == expected["chunk_series"]
    assert table_rows(db, "chunk_layers", "chunk, layer") == expected["chunk_layers"]


@pytest.mark.parametrize("name", ["lead-up", "thinning"])
def test_the_same_layer_rows_kept(corpus: Dict[str, Any], name: str) -> None:
    """Which steps keep their layer rows in a long run (LayerDetailRetention): samples, lead-ups of
    non-finite steps and warnings, a warning about a step still to come, thinning by a budget."""
    case = next(c for c in corpus["__retention__"] if c["name"] == name)
    retention = Retention(KeepPolicy.parse("auto"))
    nonfinite = set(case["nonfinite"])
    calls: List[List[Any]] = []

    def said(decisions: List[Any]) -> List[List[Any]]:
        return [[d.step, d.detail, d.relabel_only] for d in decisions]

    for step in range(case["steps"]):
        own = retention.step(step, None, step in nonfinite)
        if len(own) > 1 or own[-1].detail != "none":
            calls.append(["step", step, said(own)])
        for at, about, kind in case["events"]:
            if at == step:
                calls.append(["event", about, kind, said(retention.event(kind, about))])
        if step in case["thin_after"]:
            calls.append(["thin", step, retention.thin(), retention.sample_every])
    assert calls == case["calls"]


@pytest.mark.parametrize("name", CASES)
def test_the_same_summary_counts(corpus: Dict[str, Dict[str, Any]], name: str) -> None:
    """What the summary counts of the steps (StepTally): steps, non-finite and skipped steps, the
    first origin the loss scaler could not absorb, each layer's non-finite steps, the samples
    quarantined, the steps a second."""
    case = corpus[name]
    layers = [Layer(*layer) for layer in case["layers"]]
    tally = StepTally(len(layers))
    for r in case["records"]:
        o = r["origin"]
        origin = Origin(phase=o["phase"], step=r["step"], layer=o["layer"], produced=o["produced"]) if o else Origin()
        tally.add(origin, fate(r)[0], r["skipped"], bool(r["overflow_layers"]), number(r["step_ms"]),
                  layer_healths(r), r["quarantined"])
    first = tally.first_origin
    got = {"steps_run": tally.steps, "first_nonfinite_step": first.step if first else None,
           "origin": [first.phase, first.layer if first.layer >= 0 else None, first.produced] if first else None,
           "nonfinite_steps": tally.nonfinite_steps,
           "nonfinite_steps_per_layer": {l.path: n for l, n in zip(layers, tally.per_layer) if n},
           "quarantined_samples": tally.quarantined_samples(), "skipped_steps": tally.skipped_steps,
           "scaler_skipped_steps": tally.scaler_skipped_steps, "steps_per_second": tally.steps_per_second()}
    s = case["summary"]
    expected = {k: s[k] for k in got if k != "origin"}
    expected["origin"] = [s["origin"]["phase"], s["origin"]["layer_id"], s["origin"]["produced"]] if s["origin"] \
        else None
    assert got == expected


def chain_calls(layers: List[Layer], health: List[LayerHealth]) -> tuple:
    """What the probe records of a chain of leaves inside a container (a Sequential): each leaf's
    call, then the container's; in backward, the last leaf's output (the container's too) first,
    then each leaf's output, taken by the next leaf."""
    parents = {layer.parent for layer in layers}
    leaves = [layer.id for layer in layers if layer.id not in parents]
    order = leaves + [layer.id for layer in reversed(layers) if layer.id in parents]
    calls = [Call(module=i, inputs_finite=health[i].input_finite, output_nonfinite=health[i].forward.has_nonfinite(),
                  output_grads_finite=not health[i].grad.has_nonfinite() if health[i].grad.present else None)
             for i in order]
    calls[len(leaves)].output_grads_finite = calls[len(leaves) - 1].output_grads_finite  # the same tensor
    events = []
    for k in range(len(leaves) - 1, -1, -1):
        last = k == len(leaves) - 1
        events.append(GradEvent(nonfinite=health[leaves[k]].grad.has_nonfinite(),
                                producers=[k] + ([len(leaves)] if last else []), consumers=[] if last else [k + 1]))
    return calls, events


@pytest.mark.parametrize("name", CASES)
def test_the_same_origin_and_sentence(corpus: Dict[str, Dict[str, Any]], name: str) -> None:
    case = corpus[name]
    layers = [Layer(*layer) for layer in case["layers"]]
    params_finite = True
    for r in case["records"]:
        health_ = layer_healths(r)
        calls, events = chain_calls(layers, health_)
        o = find_origin(r["step"], layers, health_, calls, events, health(r["input_health"]), health(r["loss_health"]),
                        params_finite)
        params_finite = not any(lh.params.has_nonfinite() for lh in health_)
        got = {"phase": o.phase, "layer": o.layer, "produced": o.produced,
               "explanation": explain(o, health(r["input_health"]), [])} if o.valid() else None
        assert got == r["origin"], f"step {r['step']}"
