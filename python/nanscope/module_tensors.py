"""The tensors of a module's call and of its parameters, as the probe measures them, and the
precision a forward runs in."""

from __future__ import annotations

from typing import Any, Iterator, List, Sequence

import torch


def tensors_in(value: Any) -> Iterator[torch.Tensor]:
    """The tensors in a module's inputs or outputs: a tensor, or tuples, lists and dicts of them."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v)


def tensors_of(value: Any) -> Sequence[torch.Tensor]:
    """``tensors_in`` as a sequence, without a generator for the usual one tensor or tuple of them
    (every module call runs this twice)."""
    if isinstance(value, torch.Tensor):
        return (value,)
    if type(value) is tuple and len(value) == 1 and isinstance(value[0], torch.Tensor):
        return value
    return list(tensors_in(value))


def measurable(t: torch.Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def together(params: List[torch.Tensor]) -> List[torch.Tensor]:
    """A module's own parameters as the tensors to measure: one, flattened together, when they
    are dense and share a dtype and device (a run file keeps one health for them all), else each
    alone."""
    if len(params) > 1 and all(p.layout == torch.strided and not p.is_quantized for p in params) \
            and len({(p.dtype, p.device) for p in params}) == 1:
        return [torch.cat([p.detach().reshape(-1) for p in params])]
    return params


def precision_of(model: torch.nn.Module) -> str:
    """The precision the forward runs in: autocast's, else the parameters' own dtype."""
    # PyTorch 2.4 names the dtype by device (get_autocast_dtype); the older calls warn there.
    by_device = getattr(torch, "get_autocast_dtype", None)
    if torch.is_autocast_enabled():
        dtype = by_device("cuda") if by_device else torch.get_autocast_gpu_dtype()
        return "bf16" if dtype == torch.bfloat16 else "fp16"
    if hasattr(torch, "is_autocast_cpu_enabled") and torch.is_autocast_cpu_enabled():
        dtype = by_device("cpu") if by_device else torch.get_autocast_cpu_dtype()
        return "fp16" if dtype == torch.float16 else "bf16"
    for p in model.parameters():
        if p.dtype == torch.float16:
            return "fp16"
        if p.dtype == torch.bfloat16:
            return "bf16"
        break
    return "fp32"
