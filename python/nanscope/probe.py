"""Hooks that gather one training step's measurements where they happen.

Forward hooks measure each module's output and register a hook on it for the gradient that flows
back into it; when a backward pass ends (an autograd engine callback, as DistributedDataParallel
uses) the parameters' gradients are measured, accumulated and not yet clipped or unscaled,
whatever ``zero_grad`` does later (under DistributedDataParallel, each gradient bucket before its
all-reduce: see ddp.py); the optimizer's step hooks read the learning rate and the
clipped gradients just before the update and tell that the update ran (a ``GradScaler`` that
skips it never calls it). Every forward pass of the root in a step is part of it (gradient
accumulation, several inputs through one model), and every call of a module is measured on its own
(a module called in a loop); forward passes with autograd off or in eval mode (validation) are not
part of a training step, nor are the forwards a checkpointed block runs again inside backward.
"""

from __future__ import annotations

import functools
import traceback
import weakref
from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch

from .guard import Decision, gradients_finite
from .messages import Message, layer_name
from .module_tensors import measurable, precision_of, tensors_in, tensors_of, together
from .ops import OpChecker, OpOrigin
from .origin import Layer, layers_of
from .step_reader import StepReader
from .step_state import StepMeasures, StepState, Target
from .update_hooks import UpdateRatios, clip_gradients, gradient_norms, hook_step


# Runs a callback when the current backward pass ends (as DistributedDataParallel does).
_ENGINE = getattr(torch.autograd.Variable, "_execution_engine", None)
# PyTorch 2.x: -1 outside backward; tells a checkpoint's recompute from a forward of the step.
_GRAPH_TASK_ID = getattr(torch._C, "_current_graph_task_id", None)


# A guard's decision on an update: (optimizer, whether its gradients are finite: called only when
# the guard acts, as it reads the host, this step's earlier decision) -> None (the update runs) or
# what was done instead.
Decide = Callable[[torch.optim.Optimizer, Callable[[], bool], Optional[Decision]], Optional[Decision]]


class StepProbe:
    """Hooks on a model, its optimizers and its loss scaler; ``finish`` ends a step and measures it.

    Nothing here may reach the user's loop: a hook that fails records why (``failure``), every
    hook goes quiet, and the loop trains on as without the probe.
    """

    def __init__(self, model: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer] = (),
                 scaler: Any = None, ops: bool = False, decide: Optional[Decide] = None,
                 on_begin: Optional[Callable[[], None]] = None,
                 clip: Optional[Callable[[], Optional[float]]] = None) -> None:
        named = list(model.named_modules())
        self.model = model
        self.layers: List[Layer] = layers_of(named)
        self.optimizers = list(optimizers)
        self.scaler = scaler
        self.failure: Optional[str] = None  # why the probe stopped measuring; None while it measures
        # (layer path, why) for each module whose calls are not measured.
        self.not_measured: List[Tuple[str, Message]] = []
        self._modules = [m for _, m in named]
        self._own_params = [list(m.parameters(recurse=False)) for m in self._modules]
        self._all_params = [p for params in self._own_params for p in params]
        self._ratios = UpdateRatios(self._own_params)
        self._reader = StepReader(len(self.layers), self._ratios, scaler, self.optimizers)
        self._place_of = {id(p): (i, j) for i, params in enumerate(self._own_params) for j, p in enumerate(params)}
        self._step: Optional[StepState] = None
        self._passes_open = 0  # forward passes of the root that run now (a pass may call the root again)
        self._handles: List[Any] = []
        self._restore: List[Callable[[], None]] = []
        self.ops = ops  # every op of a step is checked (ops=True)
        self._decide = decide  # a guard: whether an update runs
        self._on_begin = on_begin  # told when a step begins (a guard keeps the buffers)
        self._clip = clip  # the norm the gradients are clipped to before each update (steered), or None
        self._checker: Optional[OpChecker] = None
        self._running: List[int] = []  # the modules whose forward runs now, innermost last (ops only)
        self._hook(0, lambda: model.register_forward_pre_hook(self._guard(self._on_model_forward)))
        for i, module in enumerate(self._modules):
            self._hook(i, lambda m=module, i=i: m.register_forward_hook(self._guard(functools.partial(self._on_forward, i))))
            if ops:
                self._hook(i, lambda m=module, i=i: m.register_forward_pre_hook(
                    self._guard(lambda mod, inputs, i=i: self._running.append(i))))
                self._hook(i, lambda m=module: m.register_forward_hook(self._guard(self._leave_module)))
        for optimizer in self.optimizers:
            self._hook_optimizer(optimizer)

    def _hook(self, index: int, register: Callable[[], Any]) -> None:
        """Registers one hook; a module that takes none (a TorchScript module) is named as not measured."""
        try:
            self._handles.append(register())
        except RuntimeError as e:
            path = self.layers[index].path
            layer = layer_name(path)
            said = Message("not-measured-scripted", [layer]) \
                if isinstance(self._modules[index], torch.jit.ScriptModule) else \
                Message("not-measured-calls", [layer, str(e)])
            if all(known != path for known, _ in self.not_measured):
                self.not_measured.append((path, said))

    def _guard(self, body: Callable[..., Any]) -> Callable[..., None]:
        """``body`` as a hook that never raises into the loop and returns None (a hook's result
        would replace a module's output or a gradient)."""
        def hook(*args: Any, **kwargs: Any) -> None:  # no functools.wraps: it runs for every tensor hook
            if self.failure is not None:
                return
            try:
                body(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - the user's loop must go on
                self.fail(e)
        return hook

    def fail(self, error: BaseException) -> None:
        """Stops measuring after an error of the probe's own: the hooks go quiet and are removed."""
        where = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
        self.failure = f"{type(error).__name__}: {error}" + (
            f" (at {where.filename.rsplit('/', 1)[-1]}:{where.lineno})" if where else "")
        self.close()

    # -- the optimizer ---------------------------------------------------------------------------

    def _hook_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        handles, restore = hook_step(optimizer, self._guard(self._before_update), self._guard(self._after_update),
                                     lambda: self.failure is not None,
                                     self._allow if self._decide is not None else None)
        self._handles += handles
        if restore is not None:
            self._restore.append(restore)

    def _before_update(self, optimizer: torch.optim.Optimizer) -> None:
        # The update is part of the step even when no forward hook began it (a TorchScript model).
        s = self._step if self._step is not None else self._begin(check_ops=False)
        self._measure_unseen_grads(s)
        if s.learning_rate is None:  # the first optimizer's, as run files keep one learning rate
            s.learning_rate = float(self.optimizers[0].param_groups[0]["lr"])
            s.learning_rates = [[float(g["lr"]) for g in o.param_groups] for o in self.optimizers]
        if s.weights_before is None:  # the update ratio needs the weights as they were
            s.weights_before = self._ratios.copy()
        found_inf = getattr(optimizer, "found_inf", None)
        s.found_inf_slot = None
        if isinstance(found_inf, torch.Tensor):  # a fused optimizer under a scaler (2.x): see _allow
            s.found_inf_slot = s.batch.add_norm(found_inf.detach().float())
            s.found_inf_slots.append(s.found_inf_slot)
        grad_scale = getattr(optimizer, "grad_scale", None)  # its gradients are still scaled: the kernel unscales
        norms = gradient_norms(optimizer, grad_scale if isinstance(grad_scale, torch.Tensor) else None)
        if s.clip is not None:  # steered (StepState.clip: set as the step began)
            norms = clip_gradients(optimizer, norms, s.clip)
        s.update_slots = [s.batch.add_norm(n) for n in norms]
        s.clipped_slots += s.update_slots

    def _allow(self, optimizer: torch.optim.Optimizer) -> bool:
        """The guard's decision on this update; the update runs when the probe cannot tell."""
        s = self._step
        if self._decide is None or self.failure is not None or s is None or s.update_slots is None:
            return True
        slots, found_inf, s.update_slots = s.update_slots, s.found_inf_slot, None

        def finite() -> bool:
            # The step's read, early: all it measured so far, with a held step's late numbers.
            values = self._reader.read(s.batch)
            s.read_early = True
            if found_inf is not None and values[found_inf] != 0:
                return True  # a fused kernel skips this update itself: the scaler's skip, not the guard's
            return gradients_finite(optimizer, [values[k] for k in slots])  # type: ignore[misc, arg-type]

        try:
            s.decision = self._decide(optimizer, finite, s.decision)
        except Exception as e:  # noqa: BLE001 - the guard's own failure never reaches the loop
            self.fail(e)
            return True
        return s.decision is None or s.decision.updates

    def _after_update(self) -> None:
        if self._step is not None:
            self._step.optimizer_stepped = True

    # -- forward and backward --------------------------------------------------------------------

    def _begin(self, check_ops: bool = True) -> StepState:
        """A new step; ``check_ops=False`` for one that begins at its update or end (no op left to check)."""
        s = StepState()
        if self._on_begin is not None:
            self._on_begin()
        s.precision = precision_of(self.model)
        s.clip = self._clip() if self._clip is not None else None  # steering changes it between steps only
        for i, params in enumerate(self._own_params):
            s.params[i] = [s.batch.add(t) for t in together(params)]
        if self.scaler is not None and self.scaler.is_enabled():
            scale = getattr(self.scaler, "_scale", None)
            if isinstance(scale, torch.Tensor):  # read with the rest, at the step's end
                s.scale_slot = s.batch.add_norm(scale.detach().clone())
            else:
                s.scale = float(self.scaler.get_scale())
        self._step = s
        if self.ops and check_ops:  # every op from here to the step's end is checked
            self._checker = OpChecker(lambda: self._running[-1] if self._running else -1)
            self._checker.__enter__()
        return s

    def _in_backward(self, s: Optional[StepState]) -> bool:
        """A forward that runs inside backward: a checkpointed block computed again."""
        if _GRAPH_TASK_ID is not None:
            return _GRAPH_TASK_ID() != -1
        return s is not None and s.in_backward

    def _on_model_forward(self, module: torch.nn.Module, inputs: Any) -> None:
        """A forward pass of the root: part of the training step when autograd is on and the model
        trains (validation under no_grad or in eval mode is not)."""
        if module is not self.model:
            return  # a copy of the model (copy.deepcopy copies hooks too: an EMA twin, say)
        if self._passes_open > 0:  # the root called again inside its own pass
            self._passes_open += 1
            return
        if not (torch.is_grad_enabled() and module.training) or self._in_backward(self._step):
            return
        s = self._step if self._step is not None else self._begin()
        self._passes_open = 1
        if not s.passes:
            s.inputs = inputs
        floats = [t for t in tensors_in(inputs) if measurable(t)]
        s.passes.append(([s.measure(t) for t in floats], next((t for t in floats if t.dim() > 0), None)))

    def _measured_step(self, module: torch.nn.Module) -> Optional[StepState]:
        """The step a module's call belongs to, or None: calls inside a pass of the root belong to
        it, whatever the grad mode; a submodule called on its own does when it trains with autograd."""
        if self._in_backward(self._step):
            return None
        if self._passes_open > 0:
            return self._step
        if torch.is_grad_enabled() and module.training:
            return self._step if self._step is not None else self._begin()
        return None

    def _on_forward(self, index: int, module: torch.nn.Module, inputs: Any, output: Any) -> None:
        if module is not self._modules[index]:
            return  # a copy's module (copy.deepcopy copies hooks too)
        s = self._measured_step(module)
        if s is not None:
            call = len(s.calls)
            in_slots, out_slots = [], []
            for t in tensors_of(inputs):
                if t.is_floating_point() or t.is_complex():
                    in_slots.append(s.measure(t))
                    if t.requires_grad:  # the gradient this call's backward hands back
                        self._grad_target(s, t)[1].append(call)
            for t in tensors_of(output):
                if t.is_floating_point() or t.is_complex():
                    out_slots.append(s.measure(t))
                    if t.requires_grad:
                        self._grad_target(s, t)[0].append(call)
            s.calls.append((index, in_slots, out_slots))
        if index == 0 and self._passes_open > 0:
            self._passes_open -= 1

    def _grad_target(self, s: StepState, t: torch.Tensor) -> Target:
        known = s.grad_targets.get(id(t))
        if known is not None and known[0]() is t:
            return known[1]
        target: Target = ([], [])
        s.grad_targets[id(t)] = (weakref.ref(t), target)
        t.register_hook(self._guard(functools.partial(self._on_tensor_grad, s, target)))
        return target

    def _on_tensor_grad(self, step: StepState, target: Target, grad: torch.Tensor) -> None:
        if step is not self._step:
            return  # a backward after its step ended: not this step's
        step.in_backward = True
        self._queue_param_grads(step)
        slot = step.batch.add(grad)
        step.grad_events.append((slot, target))
        for call in target[0]:
            step.call_out_grads.setdefault(call, []).append(slot)

    def _queue_param_grads(self, s: StepState) -> None:
        """Has the parameters' gradients measured when this backward pass ends: accumulated by
        then, and not yet clipped or unscaled (that comes after backward)."""
        if s.param_grads_queued:
            return
        s.param_grads_queued = True
        if _ENGINE is not None:
            _ENGINE.queue_callback(self._guard(functools.partial(self._measure_param_grads, s)))

    def _measure_param_grads(self, s: StepState) -> None:
        s.in_backward = False
        if not s.param_grads_queued:
            return
        s.param_grads_queued = False
        for index, params in enumerate(self._own_params):
            in_buckets = s.bucket_grads.get(index, {})
            grads = [p.grad for j, p in enumerate(params) if p.grad is not None and j not in in_buckets]
            if grads or in_buckets:  # a later backward of the step (accumulation) measures the sum again
                s.param_grads[index] = list(in_buckets.values()) + [s.batch.add(t) for t in together(grads)]
        s.bucket_grads = {}

    def _measure_unseen_grads(self, s: StepState) -> None:
        """Parameters' gradients that no backward hook saw made (a model that takes no hooks):
        measured as they are now, before the update."""
        if not s.param_grads and not s.grad_events:
            s.param_grads_queued = True
            self._measure_param_grads(s)

    def measure_bucket(self, params: List[torch.Tensor], grads: List[torch.Tensor]) -> None:
        """A data-parallel gradient bucket, before its all-reduce: this rank's own gradients."""
        s = self._step
        if s is None or self.failure is not None:
            return
        self._queue_param_grads(s)
        for p, grad in zip(params, grads):
            place = self._place_of.get(id(p))
            if place is not None:
                s.bucket_grads.setdefault(place[0], {})[place[1]] = s.batch.add(grad)

    def measure_reduced(self, averaged: torch.Tensor) -> None:
        """A data-parallel gradient bucket as the all-reduce gave it back (its norm tells NaN or Inf)."""
        if self._step is not None and self.failure is None:
            self._step.reduced_slots.append(self._step.batch.add_norm(averaged))

    # -- the step's end --------------------------------------------------------------------------

    def finish(self, loss: torch.Tensor) -> StepMeasures:
        """Ends the step: its one host read (step_reader.py), then the exact passes."""
        op_origin = self._stop_checking()
        # A step whose forward no hook saw (a TorchScript model) still measures its parameters.
        s = self._step if self._step is not None else self._begin(check_ops=False)
        self._step = None
        self._passes_open = 0  # a forward that raised never closed its pass
        self._measure_param_grads(s)  # without an engine callback (or a backward that raised)
        self._measure_unseen_grads(s)
        return self._reader.finish(s, loss, op_origin)

    def complete(self, m: StepMeasures) -> None:
        """A held step's loss and update ratios (StepReader.complete)."""
        self._reader.complete(m)

    @property
    def moving(self) -> List[torch.Tensor]:
        """The weights an update moves, in the order of ``StepMeasures.weights_before``."""
        return self._ratios.moving

    def _leave_module(self, module: torch.nn.Module, inputs: Any, output: Any) -> None:
        if self._running:
            self._running.pop()

    def _stop_checking(self) -> Optional[OpOrigin]:
        checker, self._checker = self._checker, None
        if checker is None:
            return None
        checker.__exit__(None, None, None)
        return checker.first

    def close(self) -> None:
        """Removes every hook; the model and optimizers are as they were."""
        self._stop_checking()
        for handle in self._handles:
            handle.remove()
        for restore in self._restore:
            restore()
        self._handles.clear()
        self._restore.clear()
        self._step = None

