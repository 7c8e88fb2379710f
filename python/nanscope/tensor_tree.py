"""Nested values (a state dict, a batch of tuples, lists and dicts) with a function applied to
each tensor, the nesting kept: host copies for what the recorder keeps, fresh copies for what
``load_state_dict`` takes, tensors moved to the device a replay runs on; and such a value taken
apart into JSON and a list of tensors (``pack``) for a capsule."""

from __future__ import annotations

import json
import math
from typing import Any, Callable, List, Tuple

import torch


def map_tensors(value: Any, change: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """``value`` with ``change`` applied to each tensor, the nesting as it was (a namedtuple too)."""
    if isinstance(value, torch.Tensor):
        return change(value)
    if isinstance(value, dict):  # a plain dict, whatever mapping it was (as pack keeps it)
        return {k: map_tensors(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [map_tensors(v, change) for v in value]
    if isinstance(value, tuple):
        items = [map_tensors(v, change) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def host_copy(value: Any, non_blocking: bool = False) -> Any:
    """``value``'s tensors copied to host memory (detached). ``non_blocking``: a GPU tensor is
    copied into pinned memory without waiting for it (no host sync); the copy may be read once the
    device's stream has been waited for (the recorder's read at a step's end does)."""
    def copy(t: torch.Tensor) -> torch.Tensor:
        if non_blocking and t.is_cuda:
            return torch.empty(t.shape, dtype=t.dtype, pin_memory=True).copy_(t.detach(), non_blocking=True)
        return t.detach().to("cpu", copy=True)
    return map_tensors(value, copy)


def fresh(value: Any) -> Any:
    """A copy of a kept state dict for ``load_state_dict``: PyTorch 2.x keeps the tensors it is
    given (on the same device), so restoring kept ones would let the next update change them."""
    return map_tensors(value, lambda t: t.clone())


def pack(value: Any) -> Tuple[str, List[torch.Tensor]]:
    """``value`` as JSON text and the list of its tensors, so that ``torch.load(weights_only=True)``
    reads it on every PyTorch (1.13's reader takes no float): tensors become ``{"$t": k}``, tuples
    ``{"$tuple": [...]}``, dicts with keys other than strings ``{"$dict": [[k, v], ...]}`` and
    non-finite floats ``{"$f": "nan"}``. Raises TypeError for any other kind of object."""
    tensors: List[torch.Tensor] = []

    def walk(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            tensors.append(v)
            return {"$t": len(tensors) - 1}
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"$f": repr(v)}
        if isinstance(v, tuple):
            return {"$tuple": [walk(x) for x in v]}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            if all(isinstance(k, str) and not k.startswith("$") for k in v):
                return {k: walk(x) for k, x in v.items()}
            return {"$dict": [[walk(k), walk(x)] for k, x in v.items()]}
        raise TypeError(f"a {type(v).__name__} (a capsule keeps tensors, numbers, strings and their nesting in "
                        "tuples, lists and dicts)")
    return json.dumps(walk(value)), tensors


def unpack(text: str, tensors: List[torch.Tensor]) -> Any:
    """What ``pack`` took apart."""
    def walk(v: Any) -> Any:
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            if "$t" in v:
                return tensors[v["$t"]]
            if "$f" in v:
                return float(v["$f"])
            if "$tuple" in v:
                return tuple(walk(x) for x in v["$tuple"])
            if "$dict" in v:
                return {walk(k): walk(x) for k, x in v["$dict"]}
            return {k: walk(x) for k, x in v.items()}
        return v
    return walk(json.loads(text))
