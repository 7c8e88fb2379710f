"""The run file's format, as the C++ side defines it.

``format.json`` beside this module is written by the C++ program ``nanscope_format`` from the very
tables the C++ recorder writes with (the schema, the steps columns, the summary's keys); CTest's
``python_format`` fails when it is stale. This module only reads it: nothing about the format is
spelled here a second time.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, List

_DEFINITION: Dict[str, Any] = json.loads(Path(__file__).with_name("format.json").read_text(encoding="utf-8"))

FORMAT_VERSION: int = _DEFINITION["format_version"]
APPLICATION_ID: int = _DEFINITION["application_id"]
SCHEMA: List[str] = _DEFINITION["schema"]
FLOAT32_EXPONENTS: List[List[float]] = _DEFINITION["float32_exponents"]
#: The steps columns a writer fills, in table order.
STEP_COLUMNS: List[str] = [c["name"] for c in _DEFINITION["steps_columns"] if c["written"]]
HEALTH_KINDS: List[str] = _DEFINITION["health_kinds"]
PHASES: List[str] = _DEFINITION["phases"]
EVENT_KINDS: List[str] = _DEFINITION["event_kinds"]
#: Event message ids and their English patterns (%1 the first argument): messages.py composes them.
EVENT_MESSAGES: Dict[str, str] = _DEFINITION["event_messages"]
SUMMARY_KEYS: List[str] = _DEFINITION["summary_keys"]
ORIGIN_KEYS: List[str] = _DEFINITION["origin_keys"]
PRECISIONS: List[str] = _DEFINITION["precisions"]
CHUNK_STEPS: int = _DEFINITION["chunk_steps"]
#: A coarse chunk (the coarse_chunk* tables) folds this many chunks.
COARSE_CHUNK_CHUNKS: int = _DEFINITION["coarse_chunk_chunks"]
#: chunk_series' series names in order; the last is the loss scale of the steps whose update was skipped.
CHUNK_SERIES: List[str] = _DEFINITION["chunk_series"]
#: Each chunk table's columns in order (chunks, chunk_series, chunk_layers; the coarse_ tables alike).
CHUNK_COLUMNS: Dict[str, List[str]] = _DEFINITION["chunk_columns"]
#: run.keep of a file that keeps every step's layer rows (docs/run-file.md, "Layer detail").
KEEP_ALL: Dict[str, Any] = _DEFINITION["keep_all"]
#: The auto policy's constants: first_steps, lead_up_steps, after_control_steps, sample_every, budget_bytes.
KEEP_AUTO: Dict[str, Any] = _DEFINITION["keep_auto"]
#: By precision name: "largest_finite" and "smallest_positive", what the forecasts warn of.
PRECISION_LIMITS: Dict[str, Dict[str, float]] = _DEFINITION["precision_limits"]


def number_json(value: float) -> Any:
    """A measured value as run files write it in JSON: NaN and +-Inf as strings, as JSON has none."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def keyed(keys: List[str], values: Dict[str, Any], what: str) -> Dict[str, Any]:
    """``values`` in the order of ``keys``; raises when the two do not name the same keys.

    This is where the Python writer and the C++ definition meet: a key added on one side and not
    the other fails here, in the tests, instead of writing a file the C++ readers misread.
    """
    if set(keys) != set(values):
        missing = sorted(set(keys) - set(values))
        extra = sorted(set(values) - set(keys))
        raise AssertionError(f"{what}: keys differ from format.json (missing {missing}, unknown {extra})")
    return {k: values[k] for k in keys}
