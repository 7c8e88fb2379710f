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


def compact_all(values: Sequence[float]) -> List[Union[None, int, float]]:
    """Mins and maxes as layer_steps stores them (docs/run-file.md, Range::Compact): a value a float
    holds exactly as the float's bits in an integer, any other as a number, NaN as NULL. Three
    struct calls for them all: a step writes eight a layer."""
    n = len(values)
    # Finite values beyond float range cannot pack as floats: a stand-in that compares unequal.
    packable = [v if not (abs(v) > _FLOAT_MAX and not math.isinf(v)) else 0.0 for v in values]
    packed = struct.pack(f"<{n}f", *packable)
    floats = struct.unpack(f"<{n}f", packed)
    bits = struct.unpack(f"<{n}i", packed)
    return [None if v != v else (bits[i] if floats[i] == v else v) for i, v in enumerate(values)]


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
    healths = [[getattr(lh, kind) for kind in fmt.HEALTH_KINDS] for lh in layers]
    # Every present health's min and max, compacted together, taken back in the same order.
    compacted = iter(compact_all([v for kinds in healths for h in kinds if h.present for v in (h.min, h.max)]))
    rows = []
    nonfinite = []
    for i, (lh, kinds) in enumerate(zip(layers, healths)):
        values: List[Any] = [step * count + i, int(lh.input_finite)]
        for kind, h in zip(fmt.HEALTH_KINDS, kinds):
            values += (h.numel, next(compacted), next(compacted), h.norm) if h.present else (None,) * 4
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
