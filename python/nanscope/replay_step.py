"""One step of a user's loop computed again from a capsule: the state put back, the generators set
as the step began, the user's ``compute_loss`` run under the recorded autocast, the backward, the
recorder's clipping and the loss scale as recorded, and the update. With a probe on, the step is
measured as the recorder measured it (the layers' health, the origin by call, and with ``ops``
the op and line that made the first non-finite value)."""

from __future__ import annotations

import contextlib
import math
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from .capsule import Capsule, RingStep
from .guard import state_finite
from .probe import StepProbe
from .rng import set_rng_state
from .step_state import StepMeasures
from .module_tensors import tensors_in
from .tensor_tree import fresh, host_copy, map_tensors
from .update_hooks import clip_gradients, gradient_norms

ComputeLoss = Callable[[torch.nn.Module, Any], Any]


class ReplayError(RuntimeError):
    """The replay cannot go on (the model does not fit the capsule, ``compute_loss`` raised, ...)."""


@dataclass
class StepResult:
    """How one computed step ended."""

    loss: float
    grads_finite: bool
    after_finite: bool  # the weights after the update (or as they were, without one)
    measures: Optional[StepMeasures] = None

    @property
    def failed(self) -> bool:
        """The loss or a gradient was not finite: the step as the recorder calls it non-finite."""
        return not math.isfinite(self.loss) or not self.grads_finite

    @property
    def finite_with_update(self) -> bool:
        return not self.failed and self.after_finite


class StepRunner:
    """Computes steps of one capsule with the user's model, optimizers and ``compute_loss``."""

    def __init__(self, capsule: Capsule, model: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer],
                 compute_loss: ComputeLoss, clip: Optional[float] = None) -> None:
        self.capsule = capsule
        self.model = model
        self.optimizers = list(optimizers)
        self.compute_loss = compute_loss
        self.loop_clip = clip  # the loop's own clipping, which compute_loss does not hold
        self.device = next(model.parameters()).device
        self.notes: List[str] = []
        # The optimizers' state as the failing step's update found it (``keep_step_optimizers``).
        self.step_optimizers: Optional[List[Dict[str, Any]]] = None

    # -- state -------------------------------------------------------------------------------------

    def restore(self, params: Dict[str, torch.Tensor], buffers: Dict[str, torch.Tensor],
                optimizers: Optional[List[Dict[str, Any]]] = None) -> None:
        """Puts the weights, buffers and (when given) the optimizers' state back."""
        with torch.no_grad():
            for name, p in self.model.named_parameters():
                p.copy_(params[name])
            for name, b in self.model.named_buffers():
                if name in buffers:
                    b.copy_(buffers[name])
        for o in self.optimizers:
            o.zero_grad()
        if optimizers:
            for o, state in zip(self.optimizers, optimizers):
                o.load_state_dict(fresh(state))  # a fresh copy: 2.x keeps the tensors it is given

    def keep_step_optimizers(self) -> None:
        """What the optimizers hold now is the state the failing step's update found: each
        computation of the step starts from it."""
        self.step_optimizers = [host_copy(o.state_dict()) for o in self.optimizers]

    def restore_step(self) -> None:
        """The failing step's own state, its optimizers' included."""
        c = self.capsule
        self.restore(c.params, c.buffers, self.step_optimizers)

    def weights_equal(self, params: Dict[str, torch.Tensor]) -> bool:
        return all(torch.equal(p.detach().cpu(), params[name]) for name, p in self.model.named_parameters())

    # -- a step ------------------------------------------------------------------------------------

    def batch_on_device(self, batch: Any) -> Any:
        return map_tensors(batch, lambda t: t.to(self.device))

    def run(self, step: RingStep, batch: Any = None, lr_factor: float = 1.0, lr: Optional[float] = None,
            clip: Optional[float] = None, fp32: bool = False, update: bool = True,
            probe_ops: Optional[bool] = None) -> StepResult:
        """Computes ``step`` (its batch, or ``batch``) from the state the model holds now.

        ``lr``/``lr_factor``/``clip``/``fp32``: a change; ``probe_ops``: measure the step as the
        recorder does (True: with op-level checks)."""
        missing = set_rng_state(step.rng)
        if missing and missing not in self.notes:
            self.notes.append(missing)
        for o, rates in zip(self.optimizers, step.lrs):
            for group, rate in zip(o.param_groups, rates):
                group["lr"] = (lr if lr is not None else rate) * lr_factor
        clip = clip if clip is not None else step.clip if step.clip is not None else self.loop_clip
        for o in self.optimizers:
            o.zero_grad()
        self.model.train()
        probe = StepProbe(self.model, self.optimizers, ops=probe_ops, clip=lambda: clip) \
            if probe_ops is not None else None
        try:
            loss = self._loss(self.batch_on_device(step.batch if batch is None else batch), fp32)
            scaling = self.capsule.loss_scaling and step.loss_scale != 1.0
            _backward(loss * step.loss_scale if scaling else loss)
            grads = [p.grad for p in self.model.parameters() if p.grad is not None and p.grad.is_floating_point()]
            if scaling and grads:  # as GradScaler.unscale_: the gradients times the scale's reciprocal
                torch._foreach_mul_(grads, 1.0 / step.loss_scale)
            grads_finite = all(bool(torch.isfinite(g).all()) for g in grads)
            if update and not (scaling and not grads_finite):  # a scaler skips a non-finite update
                for o in self.optimizers:
                    if probe is None and clip is not None:
                        clip_gradients(o, gradient_norms(o), clip)
                    _update(o)
            measures = probe.finish(loss.detach().float()) if probe is not None else None
        finally:
            if probe is not None:
                probe.close()
        return StepResult(loss=float(loss.detach().float()), grads_finite=grads_finite,
                          after_finite=state_finite(self.model), measures=measures)

    def _loss(self, batch: Any, fp32: bool) -> torch.Tensor:
        autocast = self.capsule.autocast
        context = torch.autocast(autocast[0], dtype=getattr(torch, autocast[1])) \
            if autocast and not fp32 else contextlib.nullcontext()
        try:
            with context:
                loss = self.compute_loss(self.model, batch)
        except Exception as e:
            raise ReplayError("compute_loss raised while the step was computed again (nothing was written):\n" +
                              "".join(traceback.format_exception(type(e), e, e.__traceback__))) from e
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise ReplayError(f"compute_loss must return the step's loss (a one-element tensor), not "
                              f"{type(loss).__name__}{'' if not isinstance(loss, torch.Tensor) else list(loss.shape)}")
        return loss.reshape(())

    def run_from_ring(self, lr_factor: float = 1.0, lr: Optional[float] = None,
                      clip: Optional[float] = None) -> Optional[int]:
        """Computes the ring's steps and the failing one from the ring's state with a change;
        returns the first step that was not finite (including its update), or None."""
        c = self.capsule
        self.restore(c.ring_params, c.ring_buffers, c.ring_optimizers)
        for s in c.ring + [c.failing]:
            if not self.run(s, lr_factor=lr_factor, lr=lr, clip=clip).finite_with_update:
                return s.step
        return None


def _backward(loss: torch.Tensor) -> None:
    try:
        loss.backward()
    except RuntimeError as e:
        raise ReplayError(f"the loss compute_loss returned cannot be backpropagated ({str(e).splitlines()[0]}): "
                          "compute_loss must build it from the model's outputs with autograd on, as the loop "
                          "does") from e


def _update(optimizer: torch.optim.Optimizer) -> None:
    try:
        optimizer.step()
    except (RuntimeError, TypeError) as e:
        raise ReplayError(f"the optimizer's step failed ({type(e).__name__}: {str(e).splitlines()[0]}): replay "
                          "calls optimizer.step() without arguments (an optimizer that needs a closure, such as "
                          "LBFGS, is not replayed)") from e


def batch_rows(batch: Any, rows: int, dim: int) -> int:
    """How many of ``batch``'s tensors hold ``rows`` rows along ``dim`` (those a split cuts)."""
    return sum(1 for t in tensors_in(batch) if t.dim() > dim and t.shape[dim] == rows)


def take_rows(batch: Any, keep: List[int], rows: int, dim: int) -> Any:
    """``batch`` with only the rows ``keep`` of each tensor holding ``rows`` rows along ``dim``."""
    def cut(t: torch.Tensor) -> torch.Tensor:
        if t.dim() > dim and t.shape[dim] == rows:
            return t.index_select(dim, torch.tensor(keep, dtype=torch.long, device=t.device))
        return t
    return map_tensors(batch, cut)
