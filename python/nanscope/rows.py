"""A step's rows as run files hold them (docs/run-file.md): the encodings the C++ writer uses."""

from __future__ import annotations

import json
import math
import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import format as fmt
from .health import Health
from .origin import LayerHealth

_FLOAT_MAX = 3.4028234663852886e38
_FLOAT = struct.Struct("<f")
_BITS = struct.Struct("<i")


def compact(v: float) -> Union[None, int, float]:
    """A min or max as layer_steps stores it (docs/run-file.md, Range::Compact): a value a float
    holds exactly as the float's bits in an integer, any other as a number, NaN as NULL."""
    if math.isnan(v):
        return None
    if math.isinf(v) or abs(v) <= _FLOAT_MAX:
        bits = _FLOAT.pack(v)
        if _FLOAT.unpack(bits)[0] == v:
            return _BITS.unpack(bits)[0]
    return v


def health_columns(prefix: str, h: Health) -> Dict[str, Any]:
    names = ("numel", "min", "max", "norm", "nan", "posinf", "neginf")
    if not h.present:
        return {f"{prefix}_{n}": None for n in names}
    return {f"{prefix}_numel": h.numel, f"{prefix}_min": h.min, f"{prefix}_max": h.max, f"{prefix}_norm": h.norm,
            f"{prefix}_nan": h.nan, f"{prefix}_posinf": h.posinf, f"{prefix}_neginf": h.neginf}


def index_list(values: Sequence[int]) -> Optional[str]:
    return json.dumps([int(v) for v in values], separators=(",", ":")) if values else None


def layer_rows(step: int, count: int, layers: List[LayerHealth]) -> List[Tuple[str, List[tuple]]]:
    """The layer_steps rows of a step (key = step * layers + layer; min and max compact) and the
    layer_nonfinite rows of its non-finite kinds, as (statement, rows)."""
    rows = []
    nonfinite = []
    for i, lh in enumerate(layers):
        values: List[Any] = [step * count + i, int(lh.input_finite)]
        for kind in fmt.HEALTH_KINDS:
            h: Health = getattr(lh, kind)
            values += ([h.numel, compact(h.min), compact(h.max), h.norm] if h.present else [None] * 4)
            if h.has_nonfinite():
                nonfinite.append((step, i, kind, h.nan, h.posinf, h.neginf))
        values.append(lh.update_ratio if math.isfinite(lh.update_ratio) else None)
        rows.append(tuple(values))
    columns = ["key", "input_finite"] + [f"{k}_{c}" for k in fmt.HEALTH_KINDS
                                         for c in ("numel", "min", "max", "norm")] + ["update_ratio"]
    out = [(f"INSERT INTO layer_steps ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)]
    if nonfinite:
        out.append(("INSERT INTO layer_nonfinite (step, layer, kind, nan, posinf, neginf) VALUES (?,?,?,?,?,?)",
                    nonfinite))
    return out
