"""DistributedDataParallel: each rank's own gradients, as they were before the all-reduce.

DDP averages the ranks' gradients during backward: one rank's NaN reaches every rank's
parameters' ``.grad`` before the backward pass even ends, and a recorder that looks there sees
NaN on every rank at once. A communication hook runs on each gradient bucket just before its
all-reduce: measured there, a rank's record holds its own gradients (as the C++ ranks' records
do), so the rank where a NaN was born is the first whose record goes non-finite. The hook then
runs DDP's own all-reduce (the default one: divide by the world size, sum) and checks what came
back, so a rank whose own gradients were finite can say that the NaN came from another rank.
"""

from __future__ import annotations

import warnings
from typing import Callable, List, Optional

import torch


def _ddp_class() -> Optional[type]:
    try:
        from torch.nn.parallel import DistributedDataParallel
    except ImportError:  # a torch built without distributed support
        return None
    return DistributedDataParallel


def is_ddp(model: torch.nn.Module) -> bool:
    ddp = _ddp_class()
    return ddp is not None and isinstance(model, ddp)


def inner_module(model: torch.nn.Module) -> torch.nn.Module:
    """The model a data-parallel wrapper trains (its layers named as without the wrapper, as the
    C++ ranks name them); the model itself otherwise."""
    if is_ddp(model) or isinstance(model, torch.nn.DataParallel):
        return model.module  # type: ignore[return-value]
    return model


BucketMeasure = Callable[[List[torch.Tensor], List[torch.Tensor]], None]
ReducedMeasure = Callable[[torch.Tensor], None]


def check_buckets(model: torch.nn.Module, before: BucketMeasure, after: ReducedMeasure) -> bool:
    """Registers the hook on a DDP model: ``before(parameters, gradients)`` with a bucket's
    gradients before its all-reduce, ``after(buffer)`` with the bucket averaged. False, with one
    warning, where the model already has a communication hook (DDP takes only one)."""
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    # No annotations: DDP checks them against dist.GradBucket and Future[Tensor] as objects,
    # which this module's postponed (string) annotations are not.
    def hook(state, bucket):  # type: ignore[no-untyped-def]
        before(list(bucket.parameters()), list(bucket.gradients()))
        reduced = allreduce_hook(state, bucket)

        def check(done: torch.futures.Future) -> torch.Tensor:
            value = done.value()
            tensor = value[0] if isinstance(value, (list, tuple)) else value
            after(tensor)
            return tensor

        return reduced.then(check)

    try:
        model.register_comm_hook(None, hook)
    except RuntimeError as e:  # "can only be called once": the user's own hook is in place
        warnings.warn(f"nanscope: the DistributedDataParallel model has a communication hook already ({e}); the "
                      "record holds the gradients after the all-reduce, averaged over the ranks, so every rank "
                      "goes non-finite at once. Call nanscope.record before register_comm_hook to see each "
                      "rank's own.", RuntimeWarning, stacklevel=4)
        return False
    return True
