"""What a recorded loop's run row says about it: the optimizer, and the job it is a rank of."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Union

import torch

from . import format as fmt


# One optimizer, a list of them, or None.
Optimizers = Union[None, torch.optim.Optimizer, Sequence[torch.optim.Optimizer]]


def optimizer_list(optimizer: Optimizers, caller: str) -> List[torch.optim.Optimizer]:
    """``optimizer`` as a list; raises TypeError, naming ``caller``, for anything but optimizers."""
    if optimizer is None:
        return []
    many = list(optimizer) if isinstance(optimizer, (list, tuple)) else [optimizer]
    for o in many:
        if not isinstance(o, torch.optim.Optimizer):
            raise TypeError(f"{caller}: optimizer must be a torch.optim.Optimizer (or a list of them), "
                            f"not {type(o).__name__}")
    return many


def optimizer_label(optimizer: Optional[torch.optim.Optimizer]) -> str:
    if optimizer is None:
        return "none"
    group = optimizer.param_groups[0]
    label = type(optimizer).__name__.lower()
    for key in ("momentum", "weight_decay", "betas", "eps"):
        if key in group and group[key]:
            label += f", {key.replace('_', ' ')} {group[key]}"
    return label


def optimizer_settings(optimizer: Optional[torch.optim.Optimizer]) -> Optional[Dict[str, Any]]:
    if optimizer is None:
        return None
    out: Dict[str, Any] = {}
    for key, value in optimizer.param_groups[0].items():
        if key == "params":
            continue
        if isinstance(value, (bool, int, float, str)) or value is None:
            out[key] = fmt.number_json(value) if isinstance(value, float) else value
        elif isinstance(value, (tuple, list)) and all(isinstance(v, (int, float)) for v in value):
            out[key] = list(value)
        else:
            out[key] = repr(value)
    return out


def parallel_from_environment() -> Optional[Dict[str, Any]]:
    """A torchrun-style job's rank as run files say it (the C++ ranks' "parallel" object); None
    outside a job. Its store's address and port tell one job's files from another's."""
    rank, world = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
    if rank is None or world is None:
        return None
    return {"rank": int(rank), "world_size": int(world), "address": os.environ.get("MASTER_ADDR", ""),
            "port": int(os.environ.get("MASTER_PORT", "0") or 0),
            "local_rank": int(os.environ.get("LOCAL_RANK", "-1"))}
