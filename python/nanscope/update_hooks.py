"""The optimizer's side of a step: hooks around its update (``hook_step``), the gradients' norm as
the update gets them (``gradient_norms``: after clipping and unscaling) and the update ratio
|w after - w before| / |w before| of each module's weights (``UpdateRatios``)."""

from __future__ import annotations

import functools
import math
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from .health import norms_of, stored_values
from .origin import LayerHealth


def hook_step(optimizer: torch.optim.Optimizer, before: Callable[[torch.optim.Optimizer], None],
              after: Callable[[], None], stopped: Callable[[], bool],
              allow: Optional[Callable[[torch.optim.Optimizer], bool]] = None,
              ) -> Tuple[List[Any], Optional[Callable[[], None]]]:
    """Calls ``before(optimizer)`` and ``after()`` around each ``optimizer.step()``; returns the
    hooks' handles and, where the step had to be wrapped, what puts it back. With ``allow``, the
    update runs only when ``allow(optimizer)`` says so (a guard): that takes a wrapper on 2.x too,
    as a step pre-hook cannot stop the step."""
    if allow is None and hasattr(optimizer, "register_step_pre_hook"):  # PyTorch 2.x
        return [optimizer.register_step_pre_hook(lambda opt, args, kwargs: before(opt)),
                optimizer.register_step_post_hook(lambda opt, args, kwargs: after())], None
    # Wrap the instance's step as a bound method (an LR scheduler created later wraps it in turn),
    # with functools.wraps so that a scheduler created earlier still finds its marker
    # (`_with_counter` on 1.13, `_wrapped_by_lr_sched` on 2.x) on it, and calling the step it
    # wrapped, which counts the calls.
    original = optimizer.step

    @functools.wraps(original)
    def step(opt: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        if stopped():
            return original(*args, **kwargs)
        before(opt)
        if allow is not None and not allow(opt):
            return None  # the guard stopped the update (as a GradScaler's skipped step returns None)
        result = original(*args, **kwargs)
        after()
        return result

    optimizer.step = types.MethodType(step, optimizer)  # type: ignore[method-assign]

    def restore() -> None:
        # A scheduler created after the recorder wrapped this wrapper: leave it, inert.
        if getattr(optimizer.step, "__func__", None) is step:
            optimizer.step = original  # type: ignore[method-assign]
    return [], restore


def float32(scalars: List[torch.Tensor]) -> List[torch.Tensor]:
    return [v if v.dtype == torch.float32 else v.float() for v in scalars]


def _dense(t: torch.Tensor) -> Optional[torch.Tensor]:
    """A dense floating view of what ``t`` stores, or None when there is none to reduce."""
    if t.dtype in (torch.float32, torch.float64) and t.layout == torch.strided and not t.is_nested:
        return t  # the usual gradient, as it is
    try:
        x = stored_values(t)
    except ValueError:
        return None
    return x if x.is_floating_point() else None


def gradient_norms(optimizer: torch.optim.Optimizer, scale: Optional[torch.Tensor] = None) -> List[torch.Tensor]:
    """The norms of the gradients the optimizer is about to apply, a vector a device (the norm of
    the norms is the norm of them all): one call for every gradient of a device. ``scale``: the
    gradients are still multiplied by it (a fused optimizer unscales them itself), so their norms
    are taken in float64, where scaled gradients do not overflow, and divided by it."""
    by_device: Dict[torch.device, List[torch.Tensor]] = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            grad = _dense(p.grad) if p.grad is not None else None
            if grad is not None and grad.numel() > 0:
                by_device.setdefault(grad.device, []).append(grad)
    if scale is not None:
        return [(torch.stack([torch.linalg.vector_norm(g, dtype=torch.float64) for g in grads])
                 / scale.to(grads[0].device, torch.float64)).float() for grads in by_device.values()]
    return [torch.stack(float32(norms_of(grads))) for grads in by_device.values()]


def clip_gradients(optimizer: torch.optim.Optimizer, norms: List[torch.Tensor], max_norm: float) -> List[torch.Tensor]:
    """Scales the gradients ``optimizer`` is about to apply so that their norm together is at most
    ``max_norm``, as ``torch.nn.utils.clip_grad_norm_`` does, from the norms ``gradient_norms``
    gave and on the device (no host read); returns the norms after."""
    if not norms:
        return norms
    device = norms[0].device
    total = torch.sqrt(sum((n.float().pow(2).sum().to(device) for n in norms), torch.zeros((), device=device)))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    by_device: Dict[torch.device, List[torch.Tensor]] = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            if p.grad is not None and p.grad.layout == torch.strided and p.grad.is_floating_point():
                by_device.setdefault(p.grad.device, []).append(p.grad)
    with torch.no_grad():
        for grads_device, grads in by_device.items():
            torch._foreach_mul_(grads, coef.to(grads_device))
    return [n * coef.to(n.device) for n in norms]


class UpdateRatios:
    """|w after - w before| / |w before| over each module's own dense floating weights."""

    def __init__(self, own_params: List[List[torch.Tensor]]) -> None:
        self._own_params = own_params
        self.moving = [p for params in own_params for p in params
                       if p.layout == torch.strided and p.is_floating_point()]
        self._at = {id(p): k for k, p in enumerate(self.moving)}

    def copy(self) -> Optional[List[torch.Tensor]]:
        """The weights as they are before the update: one copy of them all."""
        if not self.moving:
            return None
        with torch.no_grad():  # outside autograd, without a detach a parameter
            return list(torch._foreach_mul(self.moving, 1.0))

    def norms(self, before: List[torch.Tensor]) -> Optional[torch.Tensor]:
        """|w after - w before| of every moving weight, then |w before|, as one float32 vector."""
        with torch.no_grad():
            norms = norms_of(list(torch._foreach_sub(self.moving, before))) + norms_of(before)
        return torch.stack(float32(norms)) if norms else None

    def apply(self, norms: List[float], layers: List[LayerHealth]) -> None:
        """Each module's ratio from the vector ``norms`` gave, read on the host."""
        count = len(self.moving)
        for i, params in enumerate(self._own_params):
            places = [self._at[id(p)] for p in params if id(p) in self._at]
            moved = sum(norms[k] ** 2 for k in places)
            size = sum(norms[count + k] ** 2 for k in places)
            if places and size > 0:
                layers[i].update_ratio = math.sqrt(moved) / math.sqrt(size)
