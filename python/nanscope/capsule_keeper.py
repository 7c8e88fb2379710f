"""What the recorder keeps so that a failing step can become a capsule, cheaply on every step.

Every step costs only references and a few host-side copies: the generators' states as the step
began (tens of microseconds), its buffers cloned (a BatchNorm's running statistics change in the
forward; buffers are small next to the weights), and a reference to its batch. The weights as the
step began need no copy: the update ratio already copies them before the update
(``StepMeasures.weights_before``). The optimizer's state before an update is not kept every step:
every ``ring`` steps the state (weights, buffers, optimizers') is copied to host memory, and kept
once the next step finds it finite. A capsule holds the older of the two latest such states and
the batches of the steps from there to the failing one (its ring: 10 to 19 steps by default), so a
replay reaches the failing step's optimizer state by computing those steps again, and the
learning-rate and clipping what-ifs run from before a divergence began.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Sequence, Set

import torch

from .capsule import Capsule, RingStep
from .rng import autocast_state, portable, rng_state
from .step_state import StepMeasures
from .tensor_tree import host_copy

RING = 10  # steps between two kept states, as the guard's and the C++ snapshots


@dataclass
class _State:
    """The state a step began with, on the host."""

    step: int
    params: Dict[str, torch.Tensor]
    buffers: Dict[str, torch.Tensor]
    optimizers: List[Dict[str, Any]]


@dataclass
class _Begin:
    rng: Dict[str, Any]
    buffers: List[torch.Tensor]
    autocast: Any


class CapsuleKeeper:
    """Keeps the ring and makes a step's capsule (``end_step``)."""

    def __init__(self, model: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer],
                 moving: Sequence[torch.Tensor], asked: Sequence[int] = (), ring: int = RING) -> None:
        self._model = model
        self._optimizers = list(optimizers)
        self._named_params = list(model.named_parameters())
        self._named_buffers = list(model.named_buffers())
        self._moving_at = {id(p): k for k, p in enumerate(moving)}
        self.asked: Set[int] = set(asked)
        self._every = ring
        self._begins: Dict[int, _Begin] = {}  # by step: a held step's, and the step begun since
        self._states: List[_State] = []  # the kept states, checked finite: at most two, oldest first
        self._pending: Optional[_State] = None  # the newest copy, until its step finds it finite
        self._ring: List[RingStep] = []  # the steps since the oldest kept state
        if ring > 0 and self._optimizers:
            self._pending = self._copy(0)

    def begin_step(self, step: int, buffers: Optional[List[torch.Tensor]] = None) -> None:
        """Step ``step`` begins (its first forward): its generators, buffers and autocast as it
        finds them. ``buffers``: copies of them taken already (a guard's), which are never changed."""
        if buffers is None:
            with torch.no_grad():
                buffers = [b.clone() for _, b in self._named_buffers]
        self._begins[step] = _Begin(rng=rng_state(), buffers=buffers, autocast=autocast_state())

    def step_ended(self, step: int, m: StepMeasures) -> None:
        """Right after ``step``'s update, before the next step: a kept state the step found finite
        is confirmed, and every ``ring`` steps the state is copied (end_step may come a step later,
        for a step held for its late numbers)."""
        if self._pending is not None and self._pending.step == step:
            if not any(lh.params.has_nonfinite() for lh in m.layers):  # the state it began with
                self._states = (self._states + [self._pending])[-2:]
            self._pending = None
        if self._every > 0 and self._optimizers and (step + 1) % self._every == 0:
            self._pending = self._copy(step + 1)

    def end_step(self, step: int, m: StepMeasures, batch: Any, samples: Optional[List[int]], clip: Optional[float],
                 first_nonfinite: bool, intervened: bool) -> Optional[Capsule]:
        """Ends ``step`` (after ``step_ended``); returns its capsule when it is the first non-finite
        step or one asked for.

        ``batch``: what the loop handed to ``rec.step`` (None: the first forward's inputs);
        ``intervened``: a guard changed the state (a skip or a rollback), so the ring starts again."""
        lrs = m.learning_rates or [[float(g["lr"]) for g in o.param_groups] for o in self._optimizers]
        loss_scale, weights_before = m.loss_scale, m.weights_before
        given = batch is not None
        if not given:
            batch = m.inputs
        begin = self._begins.get(step)
        self._begins = {k: b for k, b in self._begins.items() if k > step}
        if begin is None:  # no forward hook saw the step (a TorchScript model): nothing to replay from
            begin = _Begin(rng=rng_state(), buffers=[], autocast=autocast_state())
        this = RingStep(step=step, batch=batch, rng=begin.rng, lrs=lrs, clip=clip, loss_scale=loss_scale,
                        samples=samples)
        start = self._states[0].step if self._states else None
        self._ring = [s for s in self._ring if start is not None and s.step >= start]
        capsule = None
        if first_nonfinite or step in self.asked:
            capsule = self._capsule(this, "first-non-finite" if first_nonfinite else "asked", begin, weights_before)
            capsule.loss, capsule.loss_scaling, capsule.precision = m.loss, m.loss_scaling, m.precision
            capsule.batch_given = given
        self._ring.append(this)
        if intervened:  # the state no longer follows from the ring's steps
            self._states, self._ring = [], []
        return capsule

    def _copy(self, step: int) -> _State:
        """The state now (between two steps: that of ``step`` as it begins), copied to the host."""
        # Without waiting for the device: the copy is read only after a later step's host read.
        return _State(step=step, params={n: host_copy(p, True) for n, p in self._named_params},
                      buffers={n: host_copy(b, True) for n, b in self._named_buffers},
                      optimizers=[host_copy(o.state_dict(), True) for o in self._optimizers])

    def _capsule(self, this: RingStep, reason: str, begin: _Begin,
                 weights_before: Optional[List[torch.Tensor]]) -> Capsule:
        params: Dict[str, torch.Tensor] = {}
        for name, p in self._named_params:
            k = self._moving_at.get(id(p))
            # The update has run by now: the copy taken before it; a weight no update moves, as it is.
            params[name] = host_copy(weights_before[k] if weights_before is not None and k is not None else p)
        buffers = {name: host_copy(b) for (name, _), b in zip(self._named_buffers, begin.buffers)} \
            if len(begin.buffers) == len(self._named_buffers) else {n: host_copy(b) for n, b in self._named_buffers}
        failing = _on_host(this)
        start = self._states[0] if self._states else None
        return Capsule(
            step=this.step, reason=reason, failing=failing, params=params, buffers=buffers, loss=float("nan"),
            autocast=begin.autocast, optimizers=[type(o).__name__ for o in self._optimizers],
            threads=torch.get_num_threads(), device=str(self._named_params[0][1].device),
            ring_start=start.step if start else None,
            ring_params=start.params if start else {}, ring_buffers=start.buffers if start else {},
            ring_optimizers=start.optimizers if start else [],
            ring=[_on_host(s) for s in self._ring] if start else [])


def _on_host(s: RingStep) -> RingStep:
    """A step as a capsule stores it: its batch copied to the host, its generators' states portable."""
    return replace(s, batch=host_copy(s.batch), rng=portable(s.rng))
