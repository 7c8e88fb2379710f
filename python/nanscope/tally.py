"""What a run's summary counts of its steps: the C++ ``StepTally`` (core/src/contract/step_tally.cpp),
rule for rule, checked against it by python/tests/test_conformance.py."""

from __future__ import annotations

from typing import List, Optional, Sequence

from .origin import LayerHealth, Origin


class StepTally:
    """Steps run, non-finite, skipped, rolled back; the first origin the loss scaler could not absorb; each
    layer's non-finite steps (its output or the gradient into it)."""

    def __init__(self, layer_count: int) -> None:
        self.steps = 0
        self.nonfinite_steps = 0
        self.skipped_steps = 0
        self.rollbacks = 0
        self.scaler_skipped_steps = 0
        self.step_ms = 0.0
        self.first_origin: Optional[Origin] = None
        self.per_layer = [0] * layer_count
        self.quarantined: List[int] = []

    def add(self, origin: Origin, failed: bool, skipped: bool, scaler_skipped: bool, step_ms: float,
            layers: Sequence[LayerHealth], quarantined: Sequence[int] = (), rolled_back: bool = False) -> bool:
        """Counts one step (a step counts non-finite when it has an origin); True when its origin
        is the run's first that failed."""
        self.steps += 1
        self.step_ms += step_ms
        first = False
        if origin.valid():
            self.nonfinite_steps += 1
            if failed and self.first_origin is None:
                self.first_origin = origin
                first = True
        self.skipped_steps += int(skipped)
        self.rollbacks += int(rolled_back)
        self.scaler_skipped_steps += int(scaler_skipped)
        self.quarantined += quarantined
        for i, lh in enumerate(layers):
            self.per_layer[i] += 1 if lh.nonfinite() else 0
        return first

    def quarantined_samples(self) -> List[int]:
        return sorted(set(self.quarantined))

    def steps_per_second(self) -> float:
        return self.steps / (self.step_ms / 1000.0) if self.step_ms > 0 else 0.0
