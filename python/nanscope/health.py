"""The health of a tensor, as the C++ core measures it, gathered on the tensor's own device.

A step measures many tensors (every module's output and its gradient, every parameter and its
gradient). Each is reduced where it lives to three numbers (its min, its max, its L2 norm: NaN
and Inf show in min or max) and kept as device scalars; the step's end reads them all to the host
in one copy. Only a tensor whose min or max is not finite gets an exact second pass (its NaN, +Inf
and -Inf counts, the min, max and norm of its finite part): that happens on the rare unhealthy
step, where cost does not matter and exactness does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch

NAN = float("nan")


@dataclass
class Health:
    """One tensor's (or several tensors') health: the C++ ``TensorHealth``."""

    present: bool = False  # False: nothing was observed (no gradient reached it, ...)
    numel: int = 0
    nan: int = 0
    posinf: int = 0
    neginf: int = 0
    min: float = NAN  # over the finite elements; NaN when there are none
    max: float = NAN
    norm: float = 0.0  # L2 norm of the finite elements

    def nonfinite(self) -> int:
        return self.nan + self.posinf + self.neginf

    def has_nonfinite(self) -> bool:
        return self.nonfinite() > 0

    def merge(self, other: "Health") -> None:
        """Folds another tensor's health into this one, as ``TensorHealth::merge`` does."""
        if not other.present:
            return
        had_finite = self.present and self.numel > self.nonfinite()
        other_finite = other.numel > other.nonfinite()
        self.numel += other.numel
        self.nan += other.nan
        self.posinf += other.posinf
        self.neginf += other.neginf
        if other_finite:
            self.min = min(self.min, other.min) if had_finite else other.min
            self.max = max(self.max, other.max) if had_finite else other.max
        self.norm = math.sqrt(self.norm * self.norm + other.norm * other.norm)
        self.present = True


def _reducible(t: torch.Tensor) -> torch.Tensor:
    """The tensor as the reductions take it: half types widen on the CPU, integers to float64."""
    x = t.detach()
    if x.is_complex():
        x = torch.view_as_real(x)
    if not x.is_floating_point():
        return x.to(torch.float64)
    if x.device.type == "cpu" and x.dtype in (torch.float16, torch.bfloat16):
        return x.float()
    return x


def _norm32(x: torch.Tensor) -> torch.Tensor:
    """The L2 norm as a float32 scalar, in the fastest form for the device. A norm beyond float32
    (values past 1.8e19) comes out Inf and is computed again in float64 at the step's end."""
    if x.device.type == "cpu":
        norm = torch.sqrt(torch.sum(x * x))  # CPU: far faster than vector_norm on 1.13
    else:
        norm = torch.linalg.vector_norm(x, dtype=torch.float32)  # one kernel, no temporary
    return norm if norm.dtype == torch.float32 else norm.to(torch.float32)


def exact_health(t: torch.Tensor) -> Health:
    """Every count and the finite part's min, max and norm: the exact pass (reads the host)."""
    x = _reducible(t)
    h = Health(present=True, numel=x.numel())
    if x.numel() == 0:
        return h
    finite = torch.isfinite(x)
    h.nan = int(torch.isnan(x).sum())
    h.posinf = int(torch.isposinf(x).sum())
    h.neginf = int(torch.isneginf(x).sum())
    values = x[finite]
    if values.numel() > 0:
        h.min = float(values.min())
        h.max = float(values.max())
        h.norm = float(torch.linalg.vector_norm(values, dtype=torch.float64))
    return h


def nonfinite_rows(t: torch.Tensor) -> List[int]:
    """Positions along the first dimension (the batch's rows) that hold a NaN or an Inf."""
    x = _reducible(t)
    if x.dim() == 0 or x.numel() == 0:
        return []
    rows = x.reshape(x.shape[0], -1)
    return torch.nonzero(~torch.isfinite(rows).all(dim=1)).flatten().tolist()


class StatBatch:
    """One step's measurements as device scalars, read to the host in one copy a device.

    ``add`` returns a slot; ``read`` turns every slot into a ``Health`` (or a float, for
    ``add_norm``). The measured tensors are kept until then for the exact pass: activations,
    gradients and parameters the step holds anyway, released with the batch. A slot whose min,
    max or norm is not finite gets the exact pass.
    """

    def __init__(self) -> None:
        # By device, then by dtype: the (min, max) pairs; by device: the float32 norms.
        self._pairs: Dict[torch.device, Dict[torch.dtype, List[torch.Tensor]]] = {}
        self._norms: Dict[torch.device, List[torch.Tensor]] = {}
        # A slot: (tensor kept for the exact pass, its version then, numel, (device, dtype, index)
        # of its pair or None, (device, index) of its norm or None). numel -1: a norm alone.
        self._slots: List[Tuple[Optional[torch.Tensor], int, int, Optional[Tuple[torch.device, torch.dtype, int]],
                                Optional[Tuple[torch.device, int]]]] = []

    def __len__(self) -> int:
        return len(self._slots)

    def _norm(self, x: torch.Tensor) -> Tuple[torch.device, int]:
        norms = self._norms.setdefault(x.device, [])
        norms.append(_norm32(x))
        return x.device, len(norms) - 1

    def add(self, t: torch.Tensor) -> int:
        """Measures ``t`` on its device (no host read); returns its slot."""
        x = _reducible(t)
        if x.numel() == 0:
            self._slots.append((None, 0, 0, None, None))
        else:
            pairs = self._pairs.setdefault(x.device, {}).setdefault(x.dtype, [])
            pairs.append(torch.stack(torch.aminmax(x)))
            pair = (x.device, x.dtype, len(pairs) - 1)
            kept = t.detach()  # shares t's version counter: tells a later in-place change
            self._slots.append((kept, kept._version, x.numel(), pair, self._norm(x)))
        return len(self._slots) - 1

    def add_norm(self, t: torch.Tensor) -> int:
        """Only the L2 norm of ``t`` (a gradient after clipping, say); its slot reads as a float."""
        self._slots.append((None, 0, -1, None, self._norm(_reducible(t))))
        return len(self._slots) - 1

    def read(self) -> List[object]:
        """Every slot's value: a ``Health`` for ``add``, a float for ``add_norm``."""
        pair_at: Dict[Tuple[torch.device, torch.dtype], int] = {}
        norm_at: Dict[torch.device, int] = {}
        parts: List[torch.Tensor] = []
        offset = 0
        for device in set(self._pairs) | set(self._norms):
            on_device: List[torch.Tensor] = []
            for dtype, pairs in self._pairs.get(device, {}).items():
                pair_at[(device, dtype)] = offset
                on_device.append(torch.stack(pairs).reshape(-1).to(torch.float64))
                offset += 2 * len(pairs)
            if device in self._norms:
                norm_at[device] = offset
                on_device.append(torch.stack(self._norms[device]))
                offset += len(self._norms[device])
            parts.append(torch.cat(on_device).cpu())  # the one host read of this device
        values: List[float] = torch.cat(parts).tolist() if parts else []
        out: List[object] = []
        for tensor, version, numel, pair, norm in self._slots:
            if numel == -1:
                assert norm is not None
                out.append(values[norm_at[norm[0]] + norm[1]])
            elif pair is None or norm is None:  # an empty tensor: observed, with nothing in it
                out.append(Health(present=True))
            else:
                at = pair_at[(pair[0], pair[1])] + 2 * pair[2]
                lo, hi, l2 = values[at], values[at + 1], values[norm_at[norm[0]] + norm[1]]
                assert tensor is not None
                if not (math.isfinite(lo) and math.isfinite(hi)):
                    h = exact_health(tensor)  # NaN or Inf in it: count them
                    if not h.has_nonfinite():  # changed in place since: at least say what it held
                        h.nan = int(math.isnan(lo) or math.isnan(hi))
                        h.posinf = int(hi == math.inf)
                        h.neginf = int(lo == -math.inf)
                    out.append(h)
                    continue
                if not math.isfinite(l2) and tensor._version == version:
                    # Every value finite, their norm beyond float32: again in float64, unless the
                    # tensor changed since (a parameter the update wrote), whose old norm is gone.
                    l2 = float(torch.linalg.vector_norm(_reducible(tensor), dtype=torch.float64))
                out.append(Health(present=True, numel=numel, min=lo, max=hi, norm=l2))
        return out
