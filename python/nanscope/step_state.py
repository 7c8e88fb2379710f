"""What one step gathers while it runs (``StepState``) and what it hands the recorder at its end
(``StepMeasures``): the probe fills the first from its hooks, and ``StepProbe.finish`` reads it
into the second with one host read."""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from .guard import Decision
from .health import Health, StatBatch
from .ops import OpOrigin
from .origin import Call, GradEvent, LayerHealth

# The calls a tensor is an output of, and those it is an input of: the one hook a tensor gets
# measures its gradient once for all of them.
Target = Tuple[List[int], List[int]]


@dataclass
class Late:
    """The numbers a held step reads with the next step's read: its loss, then the update
    ratio's norms (``UpdateRatios.norms``), as one float64 vector where they were computed."""

    tensor: torch.Tensor
    values: Optional[List[float]] = None  # once read


@dataclass
class StepMeasures:
    """What one step measured, on the host."""

    layers: List[LayerHealth]
    calls: List[Call]  # every module call, in the order calls ended
    grad_events: List[GradEvent]  # every gradient measured, in the order backward ran
    input_health: Health  # of every forward pass's inputs
    passes: List[torch.Tensor]  # each pass's batch (its first floating input), kept on a bad step only
    loss_health: Health
    loss: float
    grad_norm: float  # of the parameters' gradients as backward made them (unscaled)
    grad_norm_clipped: float  # as the optimizer got them
    learning_rate: float
    loss_scale: float  # 1 without a loss scaler
    loss_scaling: bool
    optimizer_stepped: bool
    decision: Optional[Decision]  # what a guard did instead of the update; None: nothing
    precision: str
    step_ms: float
    op_origin: Optional[OpOrigin] = None  # with ops=True: the first op that made a non-finite value
    # Data-parallel: this rank's own gradients were finite, those the all-reduce gave back not.
    nonfinite_from_other_ranks: bool = False
    unmeasured: List[str] = field(default_factory=list)  # the layouts of tensors this step could not measure
    # No tensor measured this step held NaN or Inf: a reader may skip looking layer by layer.
    all_finite: bool = False
    # For a capsule: the positional inputs of the step's first forward pass, and the moving weights
    # as the update found them (``StepProbe.moving``'s order; None when no update ran).
    inputs: Any = None
    weights_before: Optional[List[torch.Tensor]] = None
    learning_rates: Optional[List[List[float]]] = None  # each optimizer's groups', as the update used them
    # A guarded step read early (at its decision) and found finite: its loss and update ratios come
    # with the next read instead of a read of their own (``StepProbe.complete`` fills them in).
    late: Optional[Late] = None
    clip: Optional[float] = None  # the norm the recorder clipped the gradients to (steered), if it did


@dataclass
class StepState:
    batch: StatBatch = field(default_factory=StatBatch)
    started: float = field(default_factory=time.perf_counter)
    calls: List[Tuple[int, List[int], List[int]]] = field(default_factory=list)  # (module, inputs, outputs)
    call_out_grads: Dict[int, List[int]] = field(default_factory=dict)  # call -> its outputs' gradients
    grad_events: List[Tuple[int, Target]] = field(default_factory=list)  # (slot, target) as backward ran
    params: Dict[int, List[int]] = field(default_factory=dict)
    param_grads: Dict[int, List[int]] = field(default_factory=dict)
    passes: List[Tuple[List[int], Optional[torch.Tensor]]] = field(default_factory=list)  # (slots, rows' tensor)
    # id(tensor) -> (a weak reference to it, its slot): a tensor measured once a step, without
    # keeping it alive (an id freed and reused is told by its dead reference).
    slot_of: Dict[int, Tuple[weakref.ref, int]] = field(default_factory=dict)
    grad_targets: Dict[int, Tuple[weakref.ref, Target]] = field(default_factory=dict)
    param_grads_queued: bool = False  # their measurement waits for the end of backward
    in_backward: bool = False  # a forward now is a checkpoint's recompute, not a pass of the step
    # Data-parallel: layer -> parameter's place in it -> slot, measured in a gradient bucket
    # before its all-reduce (this backward's); and the slots of the buckets as averaged.
    bucket_grads: Dict[int, Dict[int, int]] = field(default_factory=dict)
    reduced_slots: List[int] = field(default_factory=list)
    weights_before: Optional[List[torch.Tensor]] = None  # copies taken before the step's first update
    scale_slot: Optional[int] = None
    scale: float = 1.0
    learning_rate: Optional[float] = None
    clipped_slots: List[int] = field(default_factory=list)
    # A fused optimizer under a GradScaler (2.x) is called on every step and its kernel skips the
    # update itself: the slots of the ``found_inf`` it was handed, non-zero where it skipped.
    found_inf_slots: List[int] = field(default_factory=list)
    optimizer_stepped: bool = False
    # The slots of the gradients' norms as the update about to run gets them, until a guard's
    # decision on it takes them.
    update_slots: Optional[List[int]] = None
    found_inf_slot: Optional[int] = None  # of the update about to run (a fused optimizer's)
    read_early: bool = False  # a guard's decision read what the step had measured so far
    clip: Optional[float] = None  # the norm the gradients are clipped to (steered), as the step began
    decision: Optional[Decision] = None
    precision: str = "fp32"
    inputs: Any = None  # the positional inputs of the first forward pass
    learning_rates: Optional[List[List[float]]] = None

    def measure(self, t: torch.Tensor) -> int:
        known = self.slot_of.get(id(t))
        if known is not None and known[0]() is t:
            return known[1]
        slot = self.batch.add(t)
        self.slot_of[id(t)] = (weakref.ref(t), slot)
        return slot


def calls_and_events(s: StepState, merged: Callable[[List[int]], Health]) -> Tuple[List[Call], List[GradEvent]]:
    """Every module call of the step, numbered within its module, and every gradient measured."""
    calls_of: Dict[int, int] = {}
    calls: List[Call] = []
    for k, (module, in_slots, out_slots) in enumerate(s.calls):
        out_grads = s.call_out_grads.get(k, [])
        calls_of[module] = calls_of.get(module, 0) + 1
        calls.append(Call(module=module, inputs_finite=not merged(in_slots).has_nonfinite(),
                          output_nonfinite=merged(out_slots).has_nonfinite(), number=calls_of[module],
                          output_grads_finite=None if not out_grads else not merged(out_grads).has_nonfinite()))
    for c in calls:
        c.of = calls_of[c.module]
    events = [GradEvent(nonfinite=merged([slot]).has_nonfinite(), producers=target[0], consumers=target[1])
              for slot, target in s.grad_events]
    return calls, events


def total_norm(healths: List[Health]) -> float:
    """The norm of all the gradients together: NaN or Inf as soon as one holds it."""
    if any(h.nan for h in healths):
        return float("nan")
    if any(h.posinf or h.neginf for h in healths):
        return float("inf")
    return sum(h.norm * h.norm for h in healths) ** 0.5


def value_of(h: Health) -> float:
    """A one-element tensor's value from its health."""
    if h.nan:
        return float("nan")
    if h.posinf:
        return float("inf")
    if h.neginf:
        return float("-inf")
    return h.max
