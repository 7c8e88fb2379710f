"""What a run file keeps of each layer's health: the C++ ``KeepPolicy`` and ``LayerDetailRetention``.

Every step keeps its row and every chunk its rows; the layer rows of a step are kept for the
first steps, every step holding a NaN or an Inf, the steps leading up to it (held back in a ring
until it is known whether something follows), around warnings, and on a sample of the healthy
rest, which a budget thins (docs/run-file.md, "Layer detail"). The constants come from
format.json, written by the C++ side; the rules are those of core/src/rules/layer_detail_retention.cpp.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Deque, Dict, List, Union

from . import format as fmt

FIRST_STEPS: int = fmt.KEEP_AUTO["first_steps"]
LEAD_UP_STEPS: int = fmt.KEEP_AUTO["lead_up_steps"]
AFTER_CONTROL_STEPS: int = fmt.KEEP_AUTO["after_control_steps"]
SAMPLE_EVERY: int = fmt.KEEP_AUTO["sample_every"]
DEFAULT_BUDGET_BYTES: int = fmt.KEEP_AUTO["budget_bytes"]
MAX_SAMPLE_EVERY = 1 << 20
_SMALLEST_BUDGET = 1 << 20
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}


@dataclass
class KeepPolicy:
    """``keep_all`` keeps every step's layer rows; otherwise sampled steps are thinned past ``budget_bytes``."""

    keep_all: bool = False
    budget_bytes: int = DEFAULT_BUDGET_BYTES

    @staticmethod
    def parse(keep: Union[str, int, "KeepPolicy"]) -> "KeepPolicy":
        """``"auto"``, ``"all"``, a size (``"2GiB"``, ``"500MiB"``; powers of 1024) or a number of bytes."""
        if isinstance(keep, KeepPolicy):
            return keep
        if isinstance(keep, int) and not isinstance(keep, bool):
            budget = keep
        elif isinstance(keep, str):
            text = keep.strip().lower()
            if text == "all":
                return KeepPolicy(keep_all=True)
            if text == "auto":
                return KeepPolicy()
            match = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*([a-z]*)", text)
            if not match or match.group(2) not in _UNITS:
                raise ValueError(f"nanscope.record: keep must be 'auto', 'all' or a size such as '2GiB', not {keep!r}")
            budget = int(float(match.group(1)) * _UNITS[match.group(2)])
        else:
            raise TypeError(f"nanscope.record: keep must be a string or a number of bytes, not {type(keep).__name__}")
        if budget < _SMALLEST_BUDGET:
            raise ValueError(f"nanscope.record: a keep budget of {keep!r} is under 1 MiB")
        return KeepPolicy(budget_bytes=budget)

    def name(self) -> str:
        """As the C++ keepPolicyName spells it: "all", "auto", "2GiB", "1.5GiB", "500MiB"."""
        if self.keep_all:
            return "all"
        if self.budget_bytes == DEFAULT_BUDGET_BYTES:
            return "auto"
        for factor, unit in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            value = self.budget_bytes / factor
            if value >= 1 and round(value * 1000) == value * 1000:
                return f"{value:g}{unit}"
        return str(self.budget_bytes)

    def json(self, sample_every: int) -> Dict[str, Any]:
        """run.keep, as the C++ keepJson writes it."""
        base = dict(fmt.KEEP_ALL if self.keep_all else fmt.KEEP_AUTO)
        base.update(policy=self.name(), budget_bytes=None if self.keep_all else self.budget_bytes,
                    sample_every=1 if self.keep_all else sample_every)
        return base


@dataclass
class Decision:
    """A step's layer rows to keep, ``detail`` as ``steps.layer_detail`` ("none": none for now, "":
    every step's are kept); ``relabel_only``: already written as a sample."""

    step: int
    layers: Any
    detail: str
    relabel_only: bool = False


@dataclass
class _Waiting:
    step: int
    layers: Any
    sampled: bool


class Retention:
    """Decides step by step which steps keep their layer rows (``detail`` as ``steps.layer_detail``)."""

    def __init__(self, policy: KeepPolicy) -> None:
        self.policy = policy
        self.sample_every = SAMPLE_EVERY
        self._waiting: Deque[_Waiting] = deque()
        self._warn_at = -1

    def step(self, step: int, layers: Any, holds_nonfinite: bool) -> List[Decision]:
        """A step arrives; returns its lead-up's decisions, then its own (last)."""
        if self.policy.keep_all:
            return [Decision(step, layers, "")]
        while self._waiting and self._waiting[0].step < step - LEAD_UP_STEPS:
            self._waiting.popleft()
        cause = "nonfinite" if holds_nonfinite else "warning" if step == self._warn_at \
            else "first" if step < FIRST_STEPS else None
        out: List[Decision] = []
        if cause in ("nonfinite", "warning"):
            out = self._keep_waiting(step - LEAD_UP_STEPS, step - 1, "lead-up")
        if cause is not None:
            out.append(Decision(step, layers, cause))
        else:
            sampled = step % self.sample_every == 0
            self._waiting.append(_Waiting(step, layers, sampled))
            out.append(Decision(step, layers, "sample" if sampled else "none"))
        return out

    def event(self, kind: str, step: int) -> List[Decision]:
        """A warning, first-nonfinite or paused event at ``step`` keeps it and its lead-up."""
        if self.policy.keep_all or kind not in ("warning", "first-nonfinite", "paused"):
            return []
        out = self._keep_waiting(step - LEAD_UP_STEPS, step - 1, "lead-up")
        own = self._keep_waiting(step, step, "warning")
        if not own and (not self._waiting or step > self._waiting[-1].step):
            self._warn_at = step
        return out + own

    def thin(self) -> bool:
        """Doubles the sampling stride (the writer drops the samples off it); False at the largest."""
        if self.sample_every >= MAX_SAMPLE_EVERY:
            return False
        self.sample_every *= 2
        for w in self._waiting:
            if w.sampled and w.step % self.sample_every:
                w.sampled = False
        return True

    def _keep_waiting(self, first: int, last: int, detail: str) -> List[Decision]:
        kept = [w for w in self._waiting if first <= w.step <= last]
        self._waiting = deque(w for w in self._waiting if not first <= w.step <= last)
        return [Decision(w.step, w.layers, detail, w.sampled) for w in kept]
