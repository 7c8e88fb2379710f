"""The recorder as a guard: what happens to an update whose gradients are not finite.

``nanscope.record(..., on_nonfinite=POLICY)``: ``"record"`` (the default) only records; ``"skip"``
does not apply the update and zeroes the gradients; ``"rollback"`` restores the last state checked
finite and halves the learning rate, as the C++ recovery policy does; ``"raise"`` does not apply the
update and has ``rec.step`` raise ``NonFiniteError``; ``"pause"`` waits for a decision from outside
(``nanscope steer --decide``, the window: continue, skip, rollback or stop), for at most
``pause_timeout`` seconds, then takes ``pause_default``. The decision is taken where the update can
still be stopped: in the optimizer's step, before it runs (a ``GradScaler`` that skips the step
never calls it, and the guard respects that). See docs/python.md, "Guarding your loop".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from .health import norms_of
from .tensor_tree import fresh, host_copy
from .messages import Message

POLICIES = ("record", "skip", "rollback", "raise", "pause")
DECISIONS = ("continue", "skip", "rollback", "stop")  # what a paused step can be told
SNAPSHOT_EVERY = 10  # steps between two kept states, as the C++ RunConfig::snapshotEvery
MAX_ROLLBACKS = 3  # rollbacks in a row before the guard gives up, as RecoveryPolicy::maxRetries


class Stopped(RuntimeError):
    """The loop was told to stop (``nanscope steer --decide stop``, the window's Stop): the update
    of the paused step did not run and the run file was closed."""

    def __init__(self, message: str, step: int) -> None:
        super().__init__(message)
        self.step = step


class NonFiniteError(RuntimeError):
    """A step's gradients were not finite under ``on_nonfinite="raise"`` (or rollbacks could not
    help): the update did not run, so the model's weights are those before the step.

    ``step`` is the step, ``origin`` its origin as the run file keeps it (a dict: phase, layer,
    op, ...; None when the step had none) and ``explanation`` its sentence."""

    def __init__(self, message: str, step: int, origin: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.step = step
        self.origin = origin
        self.explanation = origin.get("explanation") if origin else None


@dataclass
class Paused:
    """How a pause ended: the decision asked for (or the default when none came in time)."""

    decision: str
    request: str = ""  # the request's id; "" when the pause timed out
    waited_s: float = 0.0


# Waits at a paused step for a decision: (step) -> how the pause ended.
Wait = Callable[[int], Paused]


@dataclass
class Decision:
    """What the guard did to one step's update."""

    # "continue" (the update runs), "skip", "rollback", "no-snapshot" (a rollback with nothing to
    # restore: skipped), "raise" or "stop"
    action: str
    restored_step: int = -1  # the step whose state a rollback restored
    learning_rate: float = 0.0  # after a rollback
    why: str = ""  # a raise's reason, when not the policy's
    paused: Optional[Paused] = None  # the pause that decided it

    @property
    def updates(self) -> bool:
        return self.action == "continue"


@dataclass
class _Kept:
    step: int
    params: List[torch.Tensor]
    buffers: List[torch.Tensor]
    optimizers: List[Dict[str, Any]]


def gradients_finite(optimizer: torch.optim.Optimizer, norms: Sequence[float]) -> bool:
    """Whether every gradient ``optimizer`` is about to apply is finite, from their norms as read
    (one a device); a norm that overflowed from finite values is told apart exactly (rare: a step
    about to fail)."""
    if all(math.isfinite(v) for v in norms):
        return True
    return all(bool(torch.isfinite(p.grad).all()) for group in optimizer.param_groups for p in group["params"]
               if p.grad is not None and p.grad.is_floating_point())


class Guard:
    """Decides, before each update, whether it runs; keeps the state a rollback restores."""

    def __init__(self, policy: str, model: torch.nn.Module, optimizers: Sequence[torch.optim.Optimizer],
                 snapshot_every: int = SNAPSHOT_EVERY, max_rollbacks: int = MAX_ROLLBACKS,
                 wait: Optional[Wait] = None) -> None:
        if policy not in POLICIES:
            raise ValueError(f"nanscope.record: on_nonfinite must be one of {', '.join(POLICIES)}, not {policy!r}")
        if policy != "record" and not optimizers:
            raise ValueError(f"nanscope.record: on_nonfinite={policy!r} needs the optimizer (optimizer=...): "
                             "the guard acts on its update")
        self.policy = policy
        self._wait = wait
        self._model = model
        self._optimizers = list(optimizers)
        self._snapshot_every = snapshot_every
        self.max_rollbacks = max_rollbacks
        self._kept: Optional[_Kept] = None
        self._kept_at = -snapshot_every
        self.rollbacks_in_a_row = 0
        self._buffers = list(model.buffers())
        self._buffers_before: List[torch.Tensor] = []  # as the step found them (the forward changes them)

    @property
    def active(self) -> bool:
        return self.policy != "record"

    def begin_step(self) -> Optional[List[torch.Tensor]]:
        """A step begins: its buffers are kept (a BatchNorm's running statistics change in the
        forward), so that a step whose update is stopped leaves them as it found them. Returns
        the copies (None while the guard does not act), which are never changed."""
        if self.active and self._buffers:
            with torch.no_grad():
                self._buffers_before = [b.clone() for b in self._buffers]
            return self._buffers_before
        return None

    def decide(self, step: int, optimizer: torch.optim.Optimizer, finite: Callable[[], bool],
               earlier: Optional[Decision]) -> Optional[Decision]:
        """None: the update runs. Called in the optimizer's step, before the update; ``finite``
        tells whether its gradients are (it reads the host: called only while the guard acts);
        ``earlier`` is this step's decision at an earlier optimizer (a step stopped once stays
        stopped)."""
        if earlier is not None:
            return earlier
        if not self.active:
            return None
        if finite():
            self.rollbacks_in_a_row = 0
            if self.policy in ("rollback", "pause"):  # a pause may be told to roll back
                self._keep(step)
            return None
        paused: Optional[Paused] = None
        action = self.policy
        if action == "pause":
            if self._wait is None:
                raise RuntimeError("a pause without a channel to wait on")
            paused = self._wait(step)
            action = paused.decision
            if action == "continue":
                return Decision("continue", paused=paused)
        self._zero_gradients()
        decision = self._roll_back() if action == "rollback" else Decision(action)
        decision.paused = paused
        if decision.action != "rollback":  # the step is dropped: its buffers as it found them
            self._restore_buffers()
        return decision

    # -- rollback --------------------------------------------------------------------------------

    def _keep(self, step: int) -> None:
        """Keeps the state the step began with (its parameters, not yet updated; its buffers as it
        found them; the optimizers' state) every ``snapshot_every`` steps, when it is finite."""
        if step - self._kept_at < self._snapshot_every:
            return
        buffers = self._buffers_before if len(self._buffers_before) == len(self._buffers) else self._buffers
        # Copied first, checked on the host: the copy is the only read (every snapshot_every steps).
        kept = _Kept(step=step, params=[host_copy(p.detach()) for p in self._model.parameters()],
                     buffers=[host_copy(b) for b in buffers],
                     optimizers=[host_copy(o.state_dict()) for o in self._optimizers])
        if not _all_finite(kept.params + kept.buffers):
            return  # not a state to come back to
        self._kept = kept
        self._kept_at = step

    def _restore_buffers(self) -> None:
        if len(self._buffers_before) == len(self._buffers):
            with torch.no_grad():
                for b, value in zip(self._buffers, self._buffers_before):
                    b.copy_(value)

    def _roll_back(self) -> Decision:
        self.rollbacks_in_a_row += 1
        if self.rollbacks_in_a_row > self.max_rollbacks:
            lr = float(self._optimizers[0].param_groups[0]["lr"])
            return Decision("raise", learning_rate=lr, why=(
                f"the gradients were still non-finite after {self.max_rollbacks} rollbacks in a row (lr now {lr:g})"))
        kept = self._kept
        if kept is None:
            return Decision("no-snapshot")
        with torch.no_grad():
            for p, value in zip(self._model.parameters(), kept.params):
                p.copy_(value)
            for b, value in zip(self._model.buffers(), kept.buffers):
                b.copy_(value)
        rates = [[group["lr"] for group in o.param_groups] for o in self._optimizers]
        for optimizer, state in zip(self._optimizers, kept.optimizers):
            optimizer.load_state_dict(fresh(state))
        for optimizer, before in zip(self._optimizers, rates):  # load_state_dict brought the kept rates back
            for group, lr in zip(optimizer.param_groups, before):
                group["lr"] = lr * 0.5
        lr = float(self._optimizers[0].param_groups[0]["lr"])
        return Decision("rollback", restored_step=kept.step, learning_rate=lr)

    def _zero_gradients(self) -> None:
        for optimizer in self._optimizers:
            optimizer.zero_grad()


def state_finite(model: torch.nn.Module) -> bool:
    """Whether every floating parameter and buffer of ``model`` is finite now (one host read)."""
    return _all_finite(list(model.parameters()) + list(model.buffers()))


def _all_finite(tensors: Sequence[torch.Tensor]) -> bool:
    """Whether every floating tensor of ``tensors`` is finite: their norms in one host read, told
    exactly where a norm overflowed from finite values (rare)."""
    tensors = [t.detach() for t in tensors if t.is_floating_point() and t.numel() > 0]
    if not tensors:
        return True
    norms = torch.stack([n.float() for n in norms_of(tensors)])
    if bool(torch.isfinite(norms).all()):
        return True
    return all(bool(torch.isfinite(t).all()) for t in tensors)  # an overflowed norm, told exactly


def decision_message(decision: Decision) -> Message:
    """The sentence a step's row and event keep of what the guard did."""
    if decision.action == "rollback":
        return Message("guard-restored", [str(decision.restored_step), f"{decision.learning_rate:g}"])
    if decision.action == "no-snapshot":
        return Message("guard-no-snapshot")
    if decision.action == "raise":
        return Message("guard-raised")
    if decision.action == "stop":
        return Message("guard-stopped")
    return Message("guard-skipped")
