"""The random number generators a training step draws from, kept and put back: torch's on the
CPU, CUDA's where CUDA is in use, Python's ``random`` and numpy's when numpy is imported. A
capsule keeps them as the step began, so its dropout masks and random augmentations are drawn
again the same in a replay. The states are kept as tensors, lists and numbers only, so that
``torch.load(weights_only=True)`` reads them."""

from __future__ import annotations

import random
import sys
from typing import Any, Dict, Optional, Tuple

import torch


def rng_state() -> Dict[str, Any]:
    """The generators' states now, as they give them (tens of microseconds, on the host: no device
    sync); ``portable`` turns them into what a capsule stores."""
    state: Dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        state["numpy"] = numpy.random.get_state()
    return state


def portable(state: Dict[str, Any]) -> Dict[str, Any]:
    """``rng_state``'s states as tensors, lists and numbers only."""
    out = dict(state)
    version, internal, gauss = state["python"]
    out["python"] = [version, list(internal), gauss]
    if "numpy" in state:
        kind, keys, pos, has_gauss, cached = state["numpy"]
        out["numpy"] = [kind, torch.from_numpy(keys.astype("int64")), int(pos), int(has_gauss), float(cached)]
    return out


def set_rng_state(state: Dict[str, Any]) -> Optional[str]:
    """Puts the generators back from a ``portable`` state; returns what could not be (a CUDA state without CUDA), or None."""
    torch.set_rng_state(state["torch"])
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    missing = None
    if "cuda" in state:
        if torch.cuda.is_available() and torch.cuda.device_count() >= len(state["cuda"]):
            torch.cuda.set_rng_state_all(state["cuda"])
        else:
            missing = "the step drew from CUDA's generator, and this machine has no such CUDA device"
    if "numpy" in state:
        numpy = sys.modules.get("numpy")
        if numpy is None:
            import numpy  # type: ignore[no-redef]  # the step drew from numpy's generator
        kind, keys, pos, has_gauss, cached = state["numpy"]
        numpy.random.set_state((kind, keys.numpy().astype("uint32"), pos, has_gauss, cached))
    return missing


def autocast_state() -> Optional[Tuple[str, str]]:
    """(device type, dtype name) of the autocast the forward runs under, or None."""
    by_device = getattr(torch, "get_autocast_dtype", None)  # PyTorch 2.4 names the dtype by device
    if torch.is_autocast_enabled():
        dtype = by_device("cuda") if by_device else torch.get_autocast_gpu_dtype()
        return "cuda", str(dtype).replace("torch.", "")
    if hasattr(torch, "is_autocast_cpu_enabled") and torch.is_autocast_cpu_enabled():
        dtype = by_device("cpu") if by_device else torch.get_autocast_cpu_dtype()
        return "cpu", str(dtype).replace("torch.", "")
    return None
