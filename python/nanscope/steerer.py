"""The loop's end of steering: requests from ``RUN.nsrun.steer`` applied at the loop's next step
(learning rate, gradient clipping, the guard's policy) or at a paused step (a decision), each
acknowledged in the run file as an event that names the request."""

from __future__ import annotations

import time
from typing import Callable, List, Optional, Sequence, Tuple, Union

import torch

from .guard import Guard, Paused
from .messages import Message, short_number
from .steering import Refused, Request, RequestFile

# Writes one event: (kind, step, message, control changes as (control, old, new)).
EventSink = Callable[[str, int, Message, Sequence[Tuple[str, str, str]]], None]

WAIT_STEP_S = 0.05  # how often a paused loop looks for its decision


def _number(value: Optional[float]) -> str:
    return "off" if value is None else short_number(value, 6)


class Steerer:
    """Applies the requests the loop reads; holds the clipping norm the probe applies."""

    def __init__(self, requests: Optional[RequestFile], guard: Guard, optimizers: Sequence[torch.optim.Optimizer],
                 event: EventSink, flush: Callable[[], None], pause_timeout: float, pause_default: str) -> None:
        self.requests = requests  # None: nothing steers the loop
        self._guard = guard
        self._optimizers = list(optimizers)
        self._event = event
        self._flush = flush
        self.pause_timeout = pause_timeout
        self.pause_default = pause_default
        self.clip: Optional[float] = None  # the gradients' norm is clipped to this before each update
        self._held: List[Request] = []  # changes for a later step (at_step), in the order they came

    def between_steps(self, step: int) -> None:
        """Applies what was asked since the last look: from the loop's next step on."""
        if self.requests is not None:
            for item in self.requests.poll():
                self._handle(item, step, paused=False)
        due = [r for r in self._held if r.at_step == step]
        if due:
            self._held = [r for r in self._held if r.at_step != step]
            for request in due:
                self._handle(request, step, paused=False)

    def wait(self, step: int) -> Paused:
        """A paused step: waits for a decision, applying other requests meanwhile, for at most
        ``pause_timeout`` seconds; then ``pause_default``."""
        self._event("paused", step, Message("paused-python", [str(step), _number(self.pause_timeout)]), ())
        self._flush()
        begun = time.monotonic()
        while True:
            waited = time.monotonic() - begun
            if waited >= self.pause_timeout:
                self._event("recovery", step, Message("pause-timed-out", [_number(self.pause_timeout),
                                                                          self.pause_default]), ())
                self._flush()
                return Paused(self.pause_default, "", waited)
            for item in self.requests.poll(now=True) if self.requests is not None else []:
                decision = self._handle(item, step, paused=True)
                if decision is not None:
                    self._event("recovery", step, Message("pause-decided", [decision, f"{waited:.1f}", item.id]), ())
                    self._flush()
                    return Paused(decision, item.id, waited)
            self._flush()  # acknowledgements reach the file while the loop waits
            time.sleep(WAIT_STEP_S)

    def _handle(self, item: Union[Request, Refused], step: int, paused: bool) -> Optional[str]:
        """Applies one request whole or refuses it whole; returns its decision, if it holds one."""
        if isinstance(item, Refused):
            self._refuse(step, str(item), item.id)
            return None
        if item.decide is not None and not paused:
            self._refuse(step, "the loop is not paused: a decision applies to a paused step", item.id)
            return None
        if item.at_step is not None and item.decide is None:
            if item.at_step < step:  # the other ranks of a job applied it there: this one cannot
                self._refuse(step, f"it came after step {item.at_step}, the step it was for", item.id)
                return None
            if item.at_step > step:
                self._held.append(item)
                return None
        if (item.lr is not None or item.policy not in (None, "record")) and not self._optimizers:
            self._refuse(step, "the recorder has no optimizer (optimizer=...) to apply it to", item.id)
            return None
        changes: List[Tuple[str, str, str]] = []
        parts: List[str] = []
        if item.lr is not None:
            before = float(self._optimizers[0].param_groups[0]["lr"])
            factor = item.lr / before if before > 0 else None
            for optimizer in self._optimizers:  # groups keep their ratios to the first group
                for group in optimizer.param_groups:
                    group["lr"] = group["lr"] * factor if factor is not None else item.lr
            changes.append(("lr", _number(before), _number(item.lr)))
            parts.append(f"lr {_number(item.lr)}")
        if item.clip is not None:
            clip = None if item.clip == "off" else float(item.clip)
            changes.append(("clip", _number(self.clip), _number(clip)))
            self.clip = clip
            parts.append(f"clip {_number(clip)}")
        if item.policy is not None:
            changes.append(("on_nonfinite", self._guard.policy, item.policy))
            self._guard.policy = item.policy
            parts.append(f"on_nonfinite {item.policy}")
        if changes:
            self._event("control-change", step, Message("steer-applied", [", ".join(parts), item.id]), changes)
        return item.decide

    def _refuse(self, step: int, reason: str, request_id: str) -> None:
        self._event("warning", step, Message("steer-refused", [reason, request_id]), ())
