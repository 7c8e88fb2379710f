"""Hooks that gather one training step's measurements where they happen.

Forward hooks measure each module's output and register a hook on it for the gradient that flows
back into it; when a backward pass ends (an autograd engine callback, as DistributedDataParallel
uses) the parameters' gradients are measured, accumulated and not yet clipped or unscaled,
whatever ``zero_grad`` does later (under DistributedDataParallel, each gradient bucket before its
all-reduce: see ddp.py); the optimizer's step hooks read the learning rate and the
clipped gradients just before the update and tell that the update ran (a ``GradScaler`` that
skips it never calls it). Forwards with autograd off (validation under ``torch.no_grad()``) are
not part of a training step and are not measured.
"""

from __future__ import annotations

import functools
import math
import time
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

import torch

from .health import Health, StatBatch, nonfinite_rows
from .ops import OpChecker, OpOrigin
from .origin import Layer, LayerHealth, layers_of


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


def _measurable(t: torch.Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


@dataclass
class StepMeasures:
    """What one step measured, on the host."""

    layers: List[LayerHealth]
    forward_order: List[int]
    # Whether the gradient each module's backward handed to its inputs was finite (None: none
    # measured); not in the run file, it tells the origin whose code made a gradient.
    input_grad_finite: List[Optional[bool]]
    input_health: Health
    bad_rows: List[int]  # rows of the input batch holding NaN or Inf
    loss_health: Health
    loss: float
    grad_norm: float  # of the parameters' gradients as backward made them (unscaled)
    grad_norm_clipped: float  # as the optimizer got them
    learning_rate: float
    loss_scale: float  # 1 without a loss scaler
    loss_scaling: bool
    optimizer_stepped: bool
    precision: str
    step_ms: float
    op_origin: Optional[OpOrigin] = None  # with ops=True: the first op that made a non-finite value
    # Data-parallel: this rank's own gradients were finite, those the all-reduce gave back not.
    nonfinite_from_other_ranks: bool = False


@dataclass
class _Step:
    batch: StatBatch = field(default_factory=StatBatch)
    started: float = field(default_factory=time.perf_counter)
    forward: Dict[int, List[int]] = field(default_factory=dict)
    grad: Dict[int, List[int]] = field(default_factory=dict)
    params: Dict[int, List[int]] = field(default_factory=dict)
    param_grads: Dict[int, List[int]] = field(default_factory=dict)
    inputs: Dict[int, List[int]] = field(default_factory=dict)
    order: List[int] = field(default_factory=list)  # modules by their first forward's end
    ordered: Set[int] = field(default_factory=set)
    # id(tensor) -> (a weak reference to it, its slot): a tensor measured once a step, without
    # keeping it alive (an id freed and reused is told by its dead reference).
    slot_of: Dict[int, Tuple[weakref.ref, int]] = field(default_factory=dict)
    # id(tensor) -> the modules it is an output of, and those it is an input of: the one hook a
    # tensor gets measures its gradient once for all of them.
    grad_targets: Dict[int, Tuple[weakref.ref, Tuple[List[int], List[int]]]] = field(default_factory=dict)
    input_grad: Dict[int, List[int]] = field(default_factory=dict)  # module -> slots
    param_grads_queued: bool = False  # their measurement waits for the end of backward
    # Data-parallel: layer -> parameter's place in it -> slot, measured in a gradient bucket
    # before its all-reduce (this backward's); and the slots of the buckets as averaged.
    bucket_grads: Dict[int, Dict[int, int]] = field(default_factory=dict)
    reduced_slots: List[int] = field(default_factory=list)
    weights_before: Optional[List[torch.Tensor]] = None  # copies taken just before the update
    update_slot: Optional[int] = None  # per parameter: |w after - w before|, then |w before|
    input_slot: Optional[int] = None
    input_tensor: Optional[torch.Tensor] = None
    scale_slot: Optional[int] = None
    scale: float = 1.0
    learning_rate: Optional[float] = None
    clipped_slots: List[int] = field(default_factory=list)
    optimizer_stepped: bool = False
    precision: str = "fp32"

    def measure(self, t: torch.Tensor) -> int:
        known = self.slot_of.get(id(t))
        if known is not None and known[0]() is t:
            return known[1]
        slot = self.batch.add(t)
        self.slot_of[id(t)] = (weakref.ref(t), slot)
        return slot


# Runs a callback when the current backward pass ends (as DistributedDataParallel does).
_ENGINE = getattr(torch.autograd.Variable, "_execution_engine", None)


def _norms(tensors: List[torch.Tensor]) -> List[torch.Tensor]:
    if hasattr(torch, "_foreach_norm"):
        return list(torch._foreach_norm(tensors))
    return [torch.linalg.vector_norm(t) for t in tensors]


def _together(params: List[torch.Tensor]) -> List[torch.Tensor]:
    """A module's own parameters as the tensors to measure: one, flattened together, when they
    share a dtype and device (a run file keeps one health for them all), else each alone."""
    if len(params) > 1 and len({(p.dtype, p.device) for p in params}) == 1:
        return [torch.cat([p.detach().reshape(-1) for p in params])]
    return params


def _precision(model: torch.nn.Module) -> str:
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


class StepProbe:
    """Hooks on a model, its optimizer and its loss scaler; ``finish`` ends a step and measures it."""

    def __init__(self, model: torch.nn.Module, optimizer: Optional[torch.optim.Optimizer] = None,
                 scaler: Any = None, ops: bool = False) -> None:
        named = list(model.named_modules())
        self.model = model
        self.layers: List[Layer] = layers_of(named)
        self.optimizer = optimizer
        self.scaler = scaler
        self._modules = [m for _, m in named]
        self._own_params = [list(m.parameters(recurse=False)) for m in self._modules]
        self._all_params = [p for params in self._own_params for p in params]
        self._place_of = {id(p): (i, j) for i, params in enumerate(self._own_params) for j, p in enumerate(params)}
        self._step: Optional[_Step] = None
        self._handles: List[Any] = []
        self._restore: List[Callable[[], None]] = []
        self._handles.append(model.register_forward_pre_hook(self._on_model_forward))
        for i, module in enumerate(self._modules):
            self._handles.append(module.register_forward_hook(functools.partial(self._on_forward, i)))
        self._ops = ops
        self._checker: Optional[OpChecker] = None
        self._running: List[int] = []  # the modules whose forward runs now, innermost last (ops only)
        if ops:
            for i, module in enumerate(self._modules):
                self._handles.append(module.register_forward_pre_hook(
                    lambda m, inputs, i=i: self._running.append(i)))
                self._handles.append(module.register_forward_hook(self._leave_module))
        if optimizer is not None:
            self._hook_optimizer(optimizer)

    # -- the optimizer ---------------------------------------------------------------------------

    def _hook_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        if hasattr(optimizer, "register_step_pre_hook"):  # PyTorch 2.x
            self._handles.append(optimizer.register_step_pre_hook(lambda opt, args, kwargs: self._before_update()))
            self._handles.append(optimizer.register_step_post_hook(lambda opt, args, kwargs: self._after_update()))
            return
        # 1.13: wrap the instance's step, as a bound method, so that an LR scheduler created later
        # can wrap it in turn.
        original = optimizer.step

        def step(opt: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
            self._before_update()
            result = original(*args, **kwargs)
            self._after_update()
            return result

        optimizer.step = types.MethodType(step, optimizer)  # type: ignore[method-assign]
        self._restore.append(lambda: setattr(optimizer, "step", original))

    def _before_update(self) -> None:
        s = self._step
        if s is None or self.optimizer is None:
            return
        s.learning_rate = float(self.optimizer.param_groups[0]["lr"])
        # The update ratio |dw| / |w| needs the weights as they were: one copy of them all.
        s.weights_before = torch._foreach_mul([p.detach() for p in self._all_params], 1.0)
        by_device: Dict[torch.device, List[torch.Tensor]] = {}
        for group in self.optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    by_device.setdefault(p.grad.device, []).append(p.grad)
        for grads in by_device.values():
            # The norm of the norms is the norm of them all: one call for every gradient.
            norms = _norms(grads)
            s.clipped_slots.append(s.batch.add_norm(torch.stack(norms).float()))

    def _after_update(self) -> None:
        s = self._step
        if s is None:
            return
        s.optimizer_stepped = True
        if s.weights_before is not None:
            after = [p.detach() for p in self._all_params]
            moved = torch._foreach_sub(after, s.weights_before)
            norms = _norms(moved) + _norms(s.weights_before)
            if norms:
                same = len({n.dtype for n in norms}) == 1
                s.update_slot = s.batch.add_vector(torch.stack(norms if same else [n.float() for n in norms]).float())
            s.weights_before = None

    # -- forward and backward --------------------------------------------------------------------

    def _begin(self) -> _Step:
        s = _Step()
        s.precision = _precision(self.model)
        for i, params in enumerate(self._own_params):
            s.params[i] = [s.batch.add(t) for t in _together(params)]
        if self.scaler is not None and self.scaler.is_enabled():
            scale = getattr(self.scaler, "_scale", None)
            if isinstance(scale, torch.Tensor):  # read with the rest, at the step's end
                s.scale_slot = s.batch.add_norm(scale.detach().clone())
            else:
                s.scale = float(self.scaler.get_scale())
        self._step = s
        if self._ops:  # every op from here to the step's end is checked
            self._checker = OpChecker(lambda: self._running[-1] if self._running else -1)
            self._checker.__enter__()
        return s

    def _current(self) -> Optional[_Step]:
        if not torch.is_grad_enabled():
            return None
        return self._step if self._step is not None else self._begin()

    def _on_model_forward(self, module: torch.nn.Module, inputs: Any) -> None:
        s = self._current()
        if s is None or s.input_slot is not None:
            return
        first = next(tensors_in(inputs), None)
        if first is not None:
            s.input_slot = s.measure(first)
            s.input_tensor = first

    def _on_forward(self, index: int, module: torch.nn.Module, inputs: Any, output: Any) -> None:
        s = self._current()
        if s is None:
            return
        in_slots = s.inputs.setdefault(index, [])
        for t in tensors_in(inputs):
            if _measurable(t):
                in_slots.append(s.measure(t))
                if t.requires_grad:  # the gradient this module's backward hands back
                    self._grad_target(s, t)[1].append(index)
        slots = s.forward.setdefault(index, [])
        for t in tensors_in(output):
            if _measurable(t):
                slots.append(s.measure(t))
                if t.requires_grad:
                    self._grad_target(s, t)[0].append(index)
        if index not in s.ordered:
            s.ordered.add(index)
            s.order.append(index)

    def _grad_target(self, s: _Step, t: torch.Tensor) -> Tuple[List[int], List[int]]:
        known = s.grad_targets.get(id(t))
        if known is not None and known[0]() is t:
            return known[1]
        target: Tuple[List[int], List[int]] = ([], [])
        s.grad_targets[id(t)] = (weakref.ref(t), target)
        t.register_hook(functools.partial(self._on_tensor_grad, s, target))
        return target

    def _on_tensor_grad(self, step: _Step, target: Tuple[List[int], List[int]], grad: torch.Tensor) -> None:
        if step is not self._step:
            return  # a backward after its step ended: not this step's
        self._queue_param_grads(step)
        slot = step.batch.add(grad)
        for index in target[0]:
            step.grad.setdefault(index, []).append(slot)
        for index in target[1]:
            step.input_grad.setdefault(index, []).append(slot)

    def _queue_param_grads(self, s: _Step) -> None:
        """Has the parameters' gradients measured when this backward pass ends: accumulated by
        then, and not yet clipped or unscaled (that comes after backward)."""
        if s.param_grads_queued:
            return
        s.param_grads_queued = True
        if _ENGINE is not None:
            _ENGINE.queue_callback(functools.partial(self._measure_param_grads, s))

    def _measure_param_grads(self, s: _Step) -> None:
        if not s.param_grads_queued:
            return
        s.param_grads_queued = False
        for index, params in enumerate(self._own_params):
            in_buckets = s.bucket_grads.get(index, {})
            grads = [p.grad for j, p in enumerate(params) if p.grad is not None and j not in in_buckets]
            if grads or in_buckets:  # a later backward of the step (accumulation) measures the sum again
                s.param_grads[index] = list(in_buckets.values()) + [s.batch.add(t) for t in _together(grads)]
        s.bucket_grads = {}

    def measure_bucket(self, params: List[torch.Tensor], grads: List[torch.Tensor]) -> None:
        """A data-parallel gradient bucket, before its all-reduce: this rank's own gradients."""
        s = self._step
        if s is None:
            return
        self._queue_param_grads(s)
        for p, grad in zip(params, grads):
            place = self._place_of.get(id(p))
            if place is not None:
                s.bucket_grads.setdefault(place[0], {})[place[1]] = s.batch.add(grad)

    def measure_reduced(self, averaged: torch.Tensor) -> None:
        """A data-parallel gradient bucket as the all-reduce gave it back (its norm tells NaN or Inf)."""
        if self._step is not None:
            self._step.reduced_slots.append(self._step.batch.add_norm(averaged))

    # -- the step's end --------------------------------------------------------------------------

    def finish(self, loss: torch.Tensor) -> StepMeasures:
        """Ends the step: one host read of everything it measured, then the exact passes."""
        op_origin = self._stop_checking()
        s = self._step if self._step is not None else _Step()
        self._step = None
        self._measure_param_grads(s)  # without an engine callback (or a backward that raised)
        loss_slot = s.batch.add(loss.detach().reshape(()))
        values = s.batch.read()

        def merged(slots: List[int]) -> Health:
            if len(slots) == 1:  # the common case; a Health read is never changed afterwards
                return values[slots[0]]  # type: ignore[return-value]
            h = Health()
            for slot in slots:
                h.merge(values[slot])  # type: ignore[arg-type]
            return h

        layers: List[LayerHealth] = []
        for i in range(len(self.layers)):
            lh = LayerHealth(forward=merged(s.forward.get(i, [])), grad=merged(s.grad.get(i, [])),
                             params=merged(s.params.get(i, [])), param_grads=merged(s.param_grads.get(i, [])))
            lh.input_finite = not merged(s.inputs.get(i, [])).has_nonfinite()
            layers.append(lh)
        input_grads = [merged(s.input_grad.get(i, [])) for i in range(len(self.layers))]
        if s.update_slot is not None:
            norms = values[s.update_slot]
            assert isinstance(norms, list)
            count = len(self._all_params)
            at = 0
            for i, params in enumerate(self._own_params):
                moved = sum(v * v for v in norms[at:at + len(params)])
                size = sum(v * v for v in norms[count + at:count + at + len(params)])
                at += len(params)
                if params and size > 0:
                    layers[i].update_ratio = math.sqrt(moved) / math.sqrt(size)
        input_health = values[s.input_slot] if s.input_slot is not None else Health()
        assert isinstance(input_health, Health)
        loss_health = values[loss_slot]
        assert isinstance(loss_health, Health)
        scale = float(values[s.scale_slot]) if s.scale_slot is not None else s.scale  # type: ignore[arg-type]
        scaling = self.scaler is not None and self.scaler.is_enabled()
        grad_norm = _total_norm([lh.param_grads for lh in layers]) / (scale if scaling and scale > 0 else 1.0)
        clipped = [float(values[slot]) for slot in s.clipped_slots]  # type: ignore[arg-type]
        from_others = math.isfinite(grad_norm) and not all(
            math.isfinite(values[slot]) for slot in s.reduced_slots)  # type: ignore[arg-type]
        grad_norm_clipped = (sum(v * v for v in clipped) ** 0.5) if clipped else grad_norm
        lr = s.learning_rate
        if lr is None:
            lr = float(self.optimizer.param_groups[0]["lr"]) if self.optimizer is not None else 0.0
        return StepMeasures(
            layers=layers, forward_order=s.order,
            input_grad_finite=[None if not h.present else not h.has_nonfinite() for h in input_grads], input_health=input_health,
            bad_rows=nonfinite_rows(s.input_tensor) if input_health.has_nonfinite() and s.input_tensor is not None
            else [],
            loss_health=loss_health, loss=_value_of(loss_health), grad_norm=grad_norm,
            grad_norm_clipped=grad_norm_clipped, learning_rate=lr, loss_scale=scale if scaling else 1.0,
            loss_scaling=scaling, optimizer_stepped=s.optimizer_stepped, precision=s.precision, op_origin=op_origin,
            nonfinite_from_other_ranks=from_others,
            step_ms=(time.perf_counter() - s.started) * 1000.0)

    def _leave_module(self, module: torch.nn.Module, inputs: Any, output: Any) -> None:
        if self._running:  # returns None: a forward hook's result would replace the output
            self._running.pop()

    def _stop_checking(self) -> Optional[OpOrigin]:
        checker, self._checker = self._checker, None
        if checker is None:
            return None
        checker.__exit__(None, None, None)
        return checker.first

    def close(self) -> None:
        """Removes every hook; the model and optimizer are as they were."""
        self._stop_checking()
        for handle in self._handles:
            handle.remove()
        for restore in self._restore:
            restore()
        self._handles.clear()
        self._restore.clear()
        self._step = None


def _total_norm(healths: List[Health]) -> float:
    """The norm of all the gradients together: NaN or Inf as soon as one holds it."""
    if any(h.nan for h in healths):
        return float("nan")
    if any(h.posinf or h.neginf for h in healths):
        return float("inf")
    return sum(h.norm * h.norm for h in healths) ** 0.5


def _value_of(h: Health) -> float:
    """A one-element tensor's value from its health."""
    if h.nan:
        return float("nan")
    if h.posinf:
        return float("inf")
    if h.neginf:
        return float("-inf")
    return h.max
