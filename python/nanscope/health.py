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
# Reads that copied numbers from where they were reduced to the host (StatBatch.read_with): a
# step makes one. Counted for the tests, which also set DEFER_CPU: a CPU tensor is then measured
# as a GPU's is (reduced to scalars, read at the step's end), so the reads a step makes on a GPU
# are counted on a machine without one.
DEVICE_READS = 0
DEFER_CPU = False


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
        return bool(self.nan or self.posinf or self.neginf)  # on every step's path: no call in it

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


class Unmeasurable(ValueError):
    """A tensor the reductions cannot take: ``layout`` names its layout."""

    def __init__(self, layout: object) -> None:
        self.layout = str(layout)
        super().__init__(f"its layout {self.layout} has no reductions")


def stored_values(t: torch.Tensor) -> torch.Tensor:
    """The values a tensor stores, as a dense strided tensor: a sparse tensor's stored values (its
    implicit zeros are finite), a nested tensor's pieces, a quantized tensor dequantized. Raises
    ``Unmeasurable`` for a layout it does not know."""
    x = t.detach()
    if x.layout == torch.strided:  # the common case first: it is on every measured tensor's path
        if x.is_quantized:
            return x.dequantize()
        if getattr(x, "is_nested", False):
            pieces = [p.reshape(-1) for p in x.unbind()]
            return torch.cat(pieces) if pieces else torch.zeros(0)
        return x
    if x.layout == torch.sparse_coo:
        return x._values()
    if x.layout in _COMPRESSED:
        return x.values()
    if x.layout == torch._mkldnn:  # type: ignore[attr-defined]
        return x.to_dense()
    raise Unmeasurable(x.layout)


_PLAIN = (torch.float32, torch.float64)  # never quantized, always reduced as they are
_COMPRESSED = tuple(getattr(torch, name) for name in ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")
                    if hasattr(torch, name))


def _reducible(t: torch.Tensor) -> torch.Tensor:
    """The tensor as the reductions take it: half types widen on the CPU, integers to float64."""
    x = stored_values(t)
    if x.is_complex():
        x = torch.view_as_real(x)
    if not x.is_floating_point():
        return x.to(torch.float64)
    if x.device.type == "cpu" and x.dtype in (torch.float16, torch.bfloat16):
        return x.float()
    return x


# A large contiguous CPU tensor is reduced as rows of this many elements, then the rows' norms:
# 1.13's CPU kernels run the row-wise norm and amin/amax a third faster than one whole-tensor
# norm and aminmax (measured on 2 MB activations: 121 against 180 us).
_ROW = 128
_LARGE = 1 << 16
# A CPU tensor up to this many elements is reduced at once but read at the step's end with the
# others: its reductions cost about 2 us, turning each into a Python float several more.
_SMALL = 1 << 14


def _norm32(x: torch.Tensor) -> torch.Tensor:
    """The L2 norm as a float32 scalar: no float64 copy (asking for float64 would convert the
    whole tensor first, several times slower). A norm beyond float32 comes out Inf and is
    computed again in float64 at the step's end."""
    if x.dtype in (torch.float16, torch.bfloat16):  # on a GPU: widened inside the kernel
        return torch.linalg.vector_norm(x, dtype=torch.float32)
    if x.device.type == "cpu" and x.numel() >= _LARGE and x.numel() % _ROW == 0 and x.is_contiguous():
        norm = torch.linalg.vector_norm(torch.linalg.vector_norm(x.view(-1, _ROW), dim=1))
    else:
        norm = torch.linalg.vector_norm(x)
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


def nonfinite_rows(t: torch.Tensor, dim: int = 0) -> List[int]:
    """Positions along ``dim`` (the dimension that holds the batch's rows) that hold a NaN or an
    Inf. Runs on a step that holds them only: a sparse tensor is made dense for it."""
    x = t.detach()
    if x.layout != torch.strided and hasattr(x, "to_dense"):
        x = x.to_dense()
    x = _reducible(x)
    if x.dim() <= dim or x.numel() == 0:
        return []
    rows = x.movedim(dim, 0).reshape(x.shape[dim], -1)
    return torch.nonzero(~torch.isfinite(rows).all(dim=1)).flatten().tolist()


class StatBatch:
    """One step's measurements; ``add`` returns a slot, ``read`` gives every slot's value.

    On the CPU a tensor is read at once, and one that holds NaN or Inf gets its exact pass right
    away: no tensor outlives its hook, so the memory the step frees is reused as without the
    recorder. (A small one of a half or integer type still has its three scalars read with the
    others at the step's end.) On a GPU a tensor is reduced to device
    scalars (min, max, norm) and ``read`` copies all of them to the host at once, at the step's
    end; the tensors are kept until then for the exact pass of an unhealthy one, which the GPU's
    caching allocator makes cheap.
    """

    def __init__(self) -> None:
        # Device scalars, by device and then dtype: the (min, max) pairs; by device: the norms.
        self._pairs: Dict[torch.device, Dict[torch.dtype, List[torch.Tensor]]] = {}
        self._norms: Dict[torch.device, List[torch.Tensor]] = {}
        # Small CPU tensors' (min, max, norm) scalars, by dtype, read together at the end.
        self._host: Dict[torch.dtype, List[torch.Tensor]] = {}
        # A slot is a value already read (a Health, or a float for add_norm), or a _Pending.
        self._slots: List[object] = []
        self.unmeasured: List[str] = []  # the layout of each tensor that could not be measured

    def __len__(self) -> int:
        return len(self._slots)

    def _norm(self, x: torch.Tensor) -> Tuple[torch.device, int]:
        norms = self._norms.setdefault(x.device, [])
        norms.append(_norm32(x))
        return x.device, len(norms) - 1

    def add(self, t: torch.Tensor) -> int:
        """Measures ``t``; returns its slot (an absent health, with the reason kept in
        ``unmeasured``, for a tensor the reductions cannot take)."""
        if _small_plain(t) and not DEFER_CPU:
            # The common case, written out: a small dense CPU tensor of float32 or float64, read
            # at once (three .item() cost less than keeping the scalars for one read at the end,
            # and nothing can change the tensor before it is read). Every module call and gradient
            # runs this, where each Python call counts.
            x = t.detach()
            low, high = torch.aminmax(x)
            lo, hi = low.item(), high.item()
            if not (math.isfinite(lo) and math.isfinite(hi)):
                self._slots.append(exact_health(x))
            else:
                self._slots.append(Health(True, x.numel(), 0, 0, 0, lo, hi,
                                          _finite_norm(x, torch.linalg.vector_norm(x).item())))
            return len(self._slots) - 1
        try:
            x = _reducible(t)
        except Unmeasurable as e:
            self.unmeasured.append(e.layout)
            self._slots.append(Health())
            return len(self._slots) - 1
        if x.numel() == 0:
            self._slots.append(Health(present=True))
        elif x.device.type == "cpu" and x.numel() <= _SMALL and not DEFER_CPU:
            values = self._host.setdefault(x.dtype, [])
            low, high = torch.aminmax(x)
            norm = _norm32(x)
            values += (low, high, norm if norm.dtype == x.dtype else norm.to(x.dtype))
            self._slots.append(_HostPending(x, x._version, x.numel(), x.dtype, len(values) - 3))
        elif x.device.type == "cpu" and not DEFER_CPU:
            self._slots.append(_read_now(x))
        else:
            pairs = self._pairs.setdefault(x.device, {}).setdefault(x.dtype, [])
            pairs.append(torch.stack(torch.aminmax(x)))
            kept = t.detach()  # shares t's version counter: tells a later in-place change
            self._slots.append(_Pending(kept, kept._version, x.numel(), (x.device, x.dtype, len(pairs) - 1),
                                        self._norm(x)))
        return len(self._slots) - 1

    def add_norm(self, t: torch.Tensor) -> int:
        """Only the L2 norm of ``t`` (a gradient after clipping, say); its slot reads as a float."""
        try:
            x = _reducible(t)
        except Unmeasurable as e:
            self.unmeasured.append(e.layout)
            self._slots.append(0.0)
            return len(self._slots) - 1
        if x.device.type == "cpu" and not DEFER_CPU:
            self._slots.append(_finite_norm(x, float(_norm32(x))))
        else:
            self._slots.append(_PendingNorm(self._norm(x)))
        return len(self._slots) - 1

    def add_vector(self, t: torch.Tensor) -> int:
        """A 1-d float tensor of numbers already reduced; its slot reads as a list of floats."""
        if t.device.type == "cpu" and not DEFER_CPU:
            self._slots.append(t.tolist())
        else:
            self._slots.append(_PendingVector([self._push_scalar(v) for v in t.float().unbind()]))
        return len(self._slots) - 1

    def _push_scalar(self, v: torch.Tensor) -> Tuple[torch.device, int]:
        norms = self._norms.setdefault(v.device, [])
        norms.append(v)
        return v.device, len(norms) - 1

    def pending(self) -> bool:
        """Whether anything added is still to be read."""
        return bool(self._pairs or self._norms or self._host)

    def read(self) -> List[object]:
        """Every slot's value: a ``Health`` for ``add``, a float for ``add_norm``, a list of floats
        for ``add_vector``."""
        return self.read_with(None)[0]

    def read_with(self, extra: Optional[torch.Tensor]) -> Tuple[List[object], Optional[List[float]]]:
        """Every slot's value, and ``extra``'s (a 1-d float tensor: numbers another step left to
        be read with this one) in the same read. Reads what was added since the last read only:
        a step may read early (a guard's decision) and again at its end."""
        global DEVICE_READS
        pair_at: Dict[Tuple[torch.device, torch.dtype], int] = {}
        norm_at: Dict[torch.device, int] = {}
        extra_at = -1
        by_device: Dict[torch.device, List[torch.Tensor]] = {}
        offset = 0
        for device in set(self._pairs) | set(self._norms):
            on_device = by_device.setdefault(device, [])
            for dtype, pairs in self._pairs.get(device, {}).items():
                pair_at[(device, dtype)] = offset
                on_device.append(torch.stack(pairs).reshape(-1).to(torch.float64))
                offset += 2 * len(pairs)
            if device in self._norms:
                norm_at[device] = offset
                on_device.append(torch.stack(self._norms[device]).to(torch.float64))
                offset += len(self._norms[device])
        if extra is not None:
            by_device.setdefault(extra.device, []).append(extra.to(torch.float64))
        parts: List[torch.Tensor] = []
        for device, on_device in by_device.items():  # in the order offsets were given out
            if device == getattr(extra, "device", None):
                extra_at = sum(p.numel() for p in parts) + sum(t.numel() for t in on_device[:-1])
            parts.append(torch.cat(on_device).cpu())  # the one host read of this device
        if parts:
            DEVICE_READS += 1
        values: List[float] = torch.cat(parts).tolist() if parts else []
        host = {dtype: torch.stack(scalars).tolist() for dtype, scalars in self._host.items()}
        for k, slot in enumerate(self._slots):
            if isinstance(slot, _HostPending):
                read = host[slot.dtype]
                self._slots[k] = _resolve(slot, read[slot.at], read[slot.at + 1], read[slot.at + 2])
            elif isinstance(slot, _PendingVector):
                self._slots[k] = [values[norm_at[d] + i] for d, i in slot.items]
            elif isinstance(slot, _PendingNorm):
                self._slots[k] = values[norm_at[slot.norm[0]] + slot.norm[1]]
            elif isinstance(slot, _Pending):
                at = pair_at[(slot.pair[0], slot.pair[1])] + 2 * slot.pair[2]
                self._slots[k] = _resolve(slot, values[at], values[at + 1],
                                          values[norm_at[slot.norm[0]] + slot.norm[1]])
        self._pairs, self._norms, self._host = {}, {}, {}
        late = values[extra_at:extra_at + extra.numel()] if extra is not None else None
        return list(self._slots), late


class _Pending:
    """A GPU tensor's slot until the step's one read."""

    def __init__(self, tensor: torch.Tensor, version: int, numel: int, pair: Tuple[torch.device, torch.dtype, int],
                 norm: Tuple[torch.device, int]) -> None:
        self.tensor, self.version, self.numel, self.pair, self.norm = tensor, version, numel, pair, norm


class _HostPending:
    """A small CPU tensor's slot: its reductions done, their values read at the step's end."""

    def __init__(self, tensor: torch.Tensor, version: int, numel: int, dtype: torch.dtype, at: int) -> None:
        self.tensor, self.version, self.numel, self.dtype, self.at = tensor, version, numel, dtype, at


class _PendingVector:
    def __init__(self, items: List[Tuple[torch.device, int]]) -> None:
        self.items = items


class _PendingNorm:
    def __init__(self, norm: Tuple[torch.device, int]) -> None:
        self.norm = norm


def _small_plain(t: torch.Tensor) -> bool:
    """A small dense CPU tensor of float32 or float64: the common case, measured without detours."""
    return t.dtype in _PLAIN and t.layout == torch.strided and t.is_cpu and not t.is_nested \
        and 0 < t.numel() <= _SMALL


def norms_of(tensors: List[torch.Tensor]) -> List[torch.Tensor]:
    """Each tensor's L2 norm: one call for them all where PyTorch has it."""
    if hasattr(torch, "_foreach_norm"):
        return list(torch._foreach_norm(tensors))
    return [torch.linalg.vector_norm(t) for t in tensors]


def _finite_norm(x: torch.Tensor, l2: float) -> float:
    """A float32 norm that overflowed (values past 1.8e19), again in float64."""
    return l2 if math.isfinite(l2) else float(torch.linalg.vector_norm(x, dtype=torch.float64))


def _read_now(x: torch.Tensor) -> Health:
    if x.numel() >= _LARGE:  # see _ROW
        lo, hi = float(torch.amin(x)), float(torch.amax(x))
    else:
        lo, hi = (float(v) for v in torch.aminmax(x))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return exact_health(x)
    return Health(present=True, numel=x.numel(), min=lo, max=hi, norm=_finite_norm(x, float(_norm32(x))))


def _resolve(slot: "_Pending | _HostPending", lo: float, hi: float, l2: float) -> Health:
    changed = slot.tensor._version != slot.version  # a parameter the update wrote since
    if not (math.isfinite(lo) and math.isfinite(hi)):
        h = exact_health(slot.tensor)  # NaN or Inf in it: count them
        if changed and not h.has_nonfinite():  # overwritten since: at least say what it held
            h.nan = int(math.isnan(lo) or math.isnan(hi))
            h.posinf = int(hi == math.inf)
            h.neginf = int(lo == -math.inf)
        return h
    if not math.isfinite(l2) and not changed:
        l2 = _finite_norm(_reducible(slot.tensor), l2)
    return Health(present=True, numel=slot.numel, min=lo, max=hi, norm=l2)
