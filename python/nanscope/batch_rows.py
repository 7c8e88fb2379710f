"""Which rows of a step's batch hold NaN or Inf, named by dataset index across its forward passes.

A step may run the model several times (gradient accumulation, several inputs through one
model): ``rec.step(loss, samples=...)`` then lists the indices of every pass's rows, in the order
the passes ran. The batch is not always the first dimension: recurrent and attention modules built
with ``batch_first=False`` take time first. The dimension is the one the user names
(``batch_dim=``), else the one whose sizes add up to the samples' count, trying the time-first
guess first when the model's modules take time first.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import torch

from .health import nonfinite_rows


def sequence_first(model: torch.nn.Module) -> bool:
    """Whether the model's modules that have a ``batch_first`` flag all take time first."""
    flags = [m.batch_first for m in model.modules() if isinstance(getattr(m, "batch_first", None), bool)]
    return bool(flags) and not any(flags)


def _rows(passes: Sequence[torch.Tensor], dim: int) -> List[int]:
    rows: List[int] = []
    offset = 0
    for t in passes:
        if t.dim() > dim:
            rows += [offset + r for r in nonfinite_rows(t, dim)]
            offset += t.shape[dim]
    return rows


def _shapes(passes: Sequence[torch.Tensor]) -> str:
    return ", ".join(str(list(t.shape)) for t in passes)


def bad_samples(passes: Sequence[torch.Tensor], samples: Optional[Sequence[int]], batch_dim: Optional[int],
                time_first: bool) -> Tuple[List[int], str]:
    """The dataset indices of the rows holding NaN or Inf (none without ``samples``), and a note
    for the explanation when the batch's dimension could not be told (else "")."""
    if samples is None or not passes:
        return [], ""
    candidates = [batch_dim] if batch_dim is not None else ([1, 0] if time_first else [0, 1])
    fitting = [d for d in candidates
               if all(t.dim() > d for t in passes) and sum(t.shape[d] for t in passes) == len(samples)]
    chosen = fitting[0] if fitting else candidates[0]
    rows = _rows(passes, chosen)
    note = ""
    if not fitting:
        note = (f"the step's {len(samples)} sample indices match no dimension of its inputs ({_shapes(passes)}): "
                f"rows counted along dimension {chosen}")
    elif len(fitting) > 1 and _rows(passes, fitting[1]) != rows:
        note = (f"rows along dimension {chosen}: the batch's dimension cannot be told from the inputs' shapes "
                f"({_shapes(passes)}); pass batch_dim= to nanscope.record")
    return [samples[r] if r < len(samples) else r for r in rows], note
