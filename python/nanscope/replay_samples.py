"""Which rows of a failing step's batch alone make it non-finite: the batch bisected along its
rows' dimension (the one the recorder names bad rows along), each half computed again from the
step's state, down to single rows. A part the model cannot take alone (a BatchNorm in training
mode given one row) is computed with a row known finite beside it. Rows are named by dataset index
(the step's ``samples``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional

import torch

from .capsule import Capsule
from .replay_step import ReplayError, StepRunner, batch_rows, take_rows
from .module_tensors import tensors_in

MAX_REPLAYS = 64  # a bisection of a batch of thousands of rows stops here, saying so


@dataclass
class Found:
    samples: List[int] = field(default_factory=list)  # dataset indices (rows where the step named none)
    rows: List[int] = field(default_factory=list)  # the same as rows of the batch
    replays: int = 0
    coupled_by: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)


def rows_dim(c: Capsule) -> Optional[tuple]:
    """(rows, dimension) of the failing batch, or None when no tensor of it holds the rows."""
    batch = c.failing.batch
    candidates = [c.batch_dim] if c.batch_dim is not None else ([1, 0] if c.time_first else [0, 1])
    for dim in candidates:
        sized = [t.shape[dim] for t in tensors_in(batch) if t.dim() > dim]
        rows = len(c.failing.samples) if c.failing.samples else (sized[0] if sized else 0)
        if rows > 1 and batch_rows(batch, rows, dim):
            return rows, dim
    return None


def without_rows(c: Capsule, drop: List[int]) -> Any:
    """The failing batch without the rows ``drop``."""
    found = rows_dim(c)
    if found is None:
        raise ReplayError("the batch cannot be split into rows: no tensor of it holds the step's rows")
    rows, dim = found
    return take_rows(c.failing.batch, [r for r in range(rows) if r not in set(drop)], rows, dim)


def find_samples(runner: StepRunner, c: Capsule) -> Found:
    found = Found()
    shape = rows_dim(c)
    if shape is None:
        found.notes.append("the batch cannot be split into rows (no tensor of it holds the step's rows along "
                           "the batch's dimension): no sample named")
        return found
    rows, dim = shape
    unclear = [False]
    good: List[int] = []  # a row of a part that computed finite: company for a part too small alone

    def attempt(keep: List[int]) -> Optional[bool]:
        if found.replays >= MAX_REPLAYS:
            return None
        found.replays += 1
        runner.restore_step()
        try:
            return runner.run(c.failing, batch=take_rows(c.failing.batch, keep, rows, dim), update=False).failed
        except ReplayError:  # a part the model cannot take alone (a BatchNorm given one row)
            return None

    def fails(keep: List[int]) -> Optional[bool]:
        failed = attempt(keep)
        if failed is None and good and good[0] not in keep:
            failed = attempt(keep + good[:1])  # with a row known finite beside it
        if failed is None:
            unclear[0] = True
        elif not failed and not good:
            good.append(keep[0])
        return failed

    def search(part: List[int]) -> List[int]:
        if len(part) == 1:
            return part
        half = len(part) // 2
        a, b = part[:half], part[half:]
        fa, fb = fails(a), fails(b)
        bad = (search(a) if fa else []) + (search(b) if fb else [])
        if not fa and not fb and fa is not None and fb is not None:
            found.coupled_by = [n for n, m in runner.model.named_modules()
                                if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
        return bad

    found.rows = search(list(range(rows)))
    if rows > 1 and len(found.rows) == rows:  # not some rows: the step fails whatever it is given
        found.rows = []
        found.notes.append("every row alone makes the step non-finite: the batch's rows are not the cause")
        return found
    samples = c.failing.samples
    found.samples = [samples[r] for r in found.rows] if samples and len(samples) == rows else list(found.rows)
    if found.replays >= MAX_REPLAYS:
        found.notes.append(f"the bisection stopped after {MAX_REPLAYS} replays")
    if unclear[0]:
        found.notes.append("some parts of the batch could not be computed alone (compute_loss raised on them)")
    if not found.rows:
        found.notes.append("no single row makes the step non-finite alone" +
                           (f" (rows are coupled by {', '.join(found.coupled_by)})" if found.coupled_by else ""))
    return found
