"""Steps folded into 64-step chunks and chunks into 1,024-step coarse chunks, as the C++ ``StepChunk``
folds them (core/src/contract/step_chunk.cpp).

A run file keeps, beside its steps, one row a chunk (``chunks``), one a chunk and series
(``chunk_series``) and one a chunk and layer (``chunk_layers``): what a window draws of those
steps, so that a long run opens from its chunks, and a step whose layer rows the file did not
keep (docs/run-file.md, "Layer detail") is still covered by its chunk's extremes. The folding
rules are the C++ ones, line for line; tests read the chunks back through the C++ reader.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import format as fmt
from .health import Health
from .origin import LayerHealth
from .rows import index_list


@dataclass
class SeriesBucket:
    """Consecutive values of a series: their extremes and the first NaN or Inf."""

    first_step: int = 0
    last_step: int = 0
    count: int = 0
    finite: int = 0
    min: float = 0.0
    max: float = 0.0
    first_nonfinite_step: int = -1
    first_nonfinite_value: float = 0.0

    def add(self, step: int, value: float) -> None:
        if self.count == 0:
            self.first_step = step
        self.last_step = step
        self.count += 1
        if math.isfinite(value):
            self.min = min(self.min, value) if self.finite else value
            self.max = max(self.max, value) if self.finite else value
            self.finite += 1
        elif self.first_nonfinite_step < 0:
            self.first_nonfinite_step = step
            self.first_nonfinite_value = value

    def fold(self, later: "SeriesBucket") -> None:
        """A later bucket of the same series (SeriesBucket::fold)."""
        if later.count == 0:
            return
        if self.count == 0:
            self.__dict__.update(later.__dict__)
            return
        if later.finite:
            self.min = min(self.min, later.min) if self.finite else later.min
            self.max = max(self.max, later.max) if self.finite else later.max
        if self.first_nonfinite_step < 0 and later.first_nonfinite_step >= 0:
            self.first_nonfinite_step, self.first_nonfinite_value = later.first_nonfinite_step, later.first_nonfinite_value
        self.last_step = later.last_step
        self.count += later.count
        self.finite += later.finite

    def row(self, chunk: int, name: str) -> Dict[str, Any]:
        """Its chunk_series row, by column."""
        nonfinite = self.first_nonfinite_step >= 0
        return {"chunk": chunk, "series": name, "first_step": self.first_step, "last_step": self.last_step,
                "count": self.count, "finite": self.finite,
                "min": self.min if self.finite else None, "max": self.max if self.finite else None,
                "first_nonfinite_step": self.first_nonfinite_step if nonfinite else None,
                "first_nonfinite_value": None if not nonfinite or math.isnan(self.first_nonfinite_value)
                else self.first_nonfinite_value}


@dataclass
class MapCell:
    """A layer's health of one kind over some steps: the worst step and the largest magnitude and norm."""

    present: bool = False
    step: int = -1
    numel: int = 0
    nan: int = 0
    posinf: int = 0
    neginf: int = 0
    absmax: float = 0.0
    norm: float = 0.0

    def fraction(self) -> float:
        return (self.nan + self.posinf + self.neginf) / self.numel if self.numel > 0 else 0.0

    def add(self, h: Health, step: int) -> None:
        """Folds one step's health in (``fold`` of the step's cell, written out: every layer and
        kind of every step comes here): the larger non-finite fraction wins, the earlier on a tie."""
        if not h.present:
            return
        absmax = max(abs(h.min), abs(h.max)) if not math.isnan(h.min) else 0.0
        absmax = absmax if math.isfinite(absmax) else 0.0
        norm = h.norm if math.isfinite(h.norm) else 0.0
        nonfinite = h.nan + h.posinf + h.neginf
        if not self.present:
            self.present, self.step, self.numel, self.nan, self.posinf, self.neginf = \
                True, step, h.numel, h.nan, h.posinf, h.neginf
            self.absmax, self.norm = absmax, norm
            return
        self.absmax, self.norm = max(self.absmax, absmax), max(self.norm, norm)
        if nonfinite and h.numel > 0 and nonfinite / h.numel > self.fraction():
            self.step, self.numel, self.nan, self.posinf, self.neginf = step, h.numel, h.nan, h.posinf, h.neginf

    def fold(self, later: "MapCell") -> None:
        """Folds a later cell in (MapCell::fold): the larger non-finite fraction wins, the earlier on a tie."""
        if not later.present:
            return
        if not self.present:
            self.__dict__.update(later.__dict__)
            return
        largest, largest_norm = max(self.absmax, later.absmax), max(self.norm, later.norm)
        if later.fraction() > self.fraction():
            self.__dict__.update(later.__dict__)
        self.absmax, self.norm = largest, largest_norm

    def columns(self, kind: str) -> Dict[str, Any]:
        """Its six chunk_layers columns for health kind ``kind``: all NULL when nothing was observed."""
        values = [self.step, self.numel, self.nan, self.posinf, self.neginf, self.absmax] if self.present \
            else [None] * 6
        return {f"{kind}_{name}": v for name, v in zip(("step", "numel", "nan", "posinf", "neginf", "absmax"), values)}


@dataclass
class LayerPart:
    cells: List[MapCell] = field(default_factory=lambda: [MapCell() for _ in fmt.HEALTH_KINDS])
    first_nonfinite: int = -1
    first_produced: int = -1
    nonfinite_steps: int = 0
    update_ratio: float = float("nan")


@dataclass
class StepFacts:
    """What a chunk folds of one step, beside its layers (the C++ ``StepRecord``'s fields)."""

    step: int
    series: Sequence[float]  # in format.CHUNK_SERIES order, without the skipped steps' scale
    loss_scale: float
    skipped: bool
    step_ms: float
    nonfinite: bool  # the step has an origin
    failed: bool  # a non-finite value the loss scaler cannot absorb
    born_in_layer: int  # -1: none (StepRecord::bornInLayer)
    scaler_skipped: bool  # its gradients overflowed under the loss scaler
    quarantined: Sequence[int] = ()


def step_fate(phase: str, layer: int, produced: bool, loss_scaling: bool, overflowed: bool,
              loss_scale: float) -> Tuple[bool, int]:
    """(failed, born_in_layer) of a step whose origin is ``phase`` ("" for none) in ``layer``: the
    C++ ``StepRecord::failed`` and ``bornInLayer``. Gradients that overflowed under a dynamic loss
    scaler (``overflowed``: it skipped the update) are the scaler at work, not a failure, until the
    scale is below fp16's smallest value."""
    absorbs = phase == "backward" and (loss_scaling or overflowed) and loss_scale >= 2.0 ** -24
    failed = bool(phase) and not absorbs
    return failed, layer if failed and produced and phase in ("forward", "backward") else -1


class StepChunk:
    """The fold of one chunk's steps, written as the chunk tables' rows once the chunk is complete."""

    def __init__(self, index: int, layer_count: int) -> None:
        self.index = index
        self.first_step = 0
        self.last_step = 0
        self.steps = 0
        self.first_origin_step = -1
        self.nonfinite_steps = 0
        self.scaler_skipped_steps = 0
        self.step_ms = 0.0
        self.quarantined: List[int] = []
        self.series = [SeriesBucket() for _ in fmt.CHUNK_SERIES[:-1]]
        self.skipped = SeriesBucket()
        self.layers = [LayerPart() for _ in range(layer_count)]

    def add(self, f: StepFacts, layers: Sequence[LayerHealth]) -> None:
        if self.steps == 0:
            self.first_step = f.step
        self.last_step = f.step
        self.steps += 1
        self.nonfinite_steps += int(f.nonfinite)
        if f.failed and self.first_origin_step < 0:
            self.first_origin_step = f.step
        self.scaler_skipped_steps += int(f.scaler_skipped)
        self.step_ms += f.step_ms
        self.quarantined += list(f.quarantined)
        for bucket, value in zip(self.series, f.series):
            bucket.add(f.step, value)
        if f.skipped:
            self.skipped.add(f.step, f.loss_scale)
        for part, lh in zip(self.layers, layers):
            for cell, kind in zip(part.cells, fmt.HEALTH_KINDS):
                cell.add(getattr(lh, kind), f.step)
            if not math.isnan(lh.update_ratio):
                part.update_ratio = lh.update_ratio if math.isnan(part.update_ratio) \
                    else max(part.update_ratio, lh.update_ratio)
            if lh.nonfinite():
                part.nonfinite_steps += 1
                if part.first_nonfinite < 0:
                    part.first_nonfinite = f.step
        if 0 <= f.born_in_layer < len(self.layers) and self.layers[f.born_in_layer].first_produced < 0:
            self.layers[f.born_in_layer].first_produced = f.step

    def fold(self, later: "StepChunk") -> None:
        """A later chunk of the same run (StepChunk::fold): a coarse chunk is its chunks folded."""
        if later.steps == 0:
            return
        if self.steps == 0:
            self.first_step = later.first_step
        self.last_step = later.last_step
        self.steps += later.steps
        self.nonfinite_steps += later.nonfinite_steps
        if self.first_origin_step < 0:
            self.first_origin_step = later.first_origin_step
        self.scaler_skipped_steps += later.scaler_skipped_steps
        self.step_ms += later.step_ms
        self.quarantined += later.quarantined
        for bucket, other in zip(self.series, later.series):
            bucket.fold(other)
        self.skipped.fold(later.skipped)
        for part, other in zip(self.layers, later.layers):
            for cell, cell_later in zip(part.cells, other.cells):
                cell.fold(cell_later)
            if not math.isnan(other.update_ratio):
                part.update_ratio = other.update_ratio if math.isnan(part.update_ratio) \
                    else max(part.update_ratio, other.update_ratio)
            part.nonfinite_steps += other.nonfinite_steps
            if part.first_nonfinite < 0:
                part.first_nonfinite = other.first_nonfinite
            if part.first_produced < 0:
                part.first_produced = other.first_produced

    def rows(self, prefix: str = "") -> List[Tuple[str, List[tuple]]]:
        """The chunk's rows, as (statement, rows) for the writer; ``prefix`` "coarse_" for a coarse chunk."""
        chunk = [{"chunk": self.index, "first_step": self.first_step, "last_step": self.last_step,
                  "steps": self.steps, "first_origin_step": _step_or_none(self.first_origin_step),
                  "nonfinite_steps": self.nonfinite_steps, "rollbacks": 0,
                  "scaler_skipped_steps": self.scaler_skipped_steps, "step_ms": self.step_ms,
                  "quarantined": index_list(self.quarantined)}]
        series = [b.row(self.index, name) for b, name in zip(self.series, fmt.CHUNK_SERIES)]
        if self.skipped.count:
            series.append(self.skipped.row(self.index, fmt.CHUNK_SERIES[-1]))
        layers = []
        for i, part in enumerate(self.layers):
            values: Dict[str, Any] = {"chunk": self.index, "layer": i,
                                      "first_nonfinite": _step_or_none(part.first_nonfinite),
                                      "first_produced": _step_or_none(part.first_produced),
                                      "nonfinite_steps": part.nonfinite_steps,
                                      "update_ratio": None if math.isnan(part.update_ratio) else part.update_ratio}
            for kind, cell in zip(fmt.HEALTH_KINDS, part.cells):
                values.update(cell.columns(kind))
                values[f"{kind}_norm"] = cell.norm if cell.present else None
            layers.append(values)
        out = [_insert(prefix, "chunks", chunk), _insert(prefix, "chunk_series", series)]
        if layers:
            out.append(_insert(prefix, "chunk_layers", layers))
        return out


def _step_or_none(step: int) -> Optional[int]:
    return step if step >= 0 else None


def _insert(prefix: str, table: str, rows: List[Dict[str, Any]]) -> Tuple[str, List[tuple]]:
    """The statement and rows that write ``rows`` into ``prefix + table``, by the columns format.json
    lists for it (a column the C++ side added and this writer does not fill fails here)."""
    names = fmt.CHUNK_COLUMNS[table]
    statement = f"INSERT OR REPLACE INTO {prefix}{table} ({', '.join(names)}) VALUES ({','.join('?' * len(names))})"
    return statement, [tuple(fmt.keyed(names, row, f"{table} row").values()) for row in rows]
