"""What a run's summary counts of its steps: the C++ ``StepTally`` (core/src/contract/step_tally.cpp),
rule for rule, checked against it by python/tests/test_conformance.py; and the summary itself."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from . import format as fmt
from .origin import Layer, LayerHealth, Origin


class StepTally:
    """Steps run, non-finite, skipped, rolled back; the first origin the loss scaler could not absorb; each
    layer's non-finite steps (its output or the gradient into it)."""

    def __init__(self, layer_count: int, learning_rate: float = 0.0) -> None:
        self.steps = 0
        self.nonfinite_steps = 0
        self.skipped_steps = 0
        self.rollbacks = 0
        self.scaler_skipped_steps = 0
        self.step_ms = 0.0
        self.first_origin: Optional[Origin] = None
        self.per_layer = [0] * layer_count
        self.quarantined: List[int] = []
        # As the last step left them.
        self.final_lr = learning_rate
        self.final_scale = 1.0
        self.final_finite = True
        self.precision = "fp32"
        self.stopped_by_policy = False  # a guard stopped the loop (raise, stop)

    def last(self, learning_rate: float, loss_scale: float, params_finite: bool, precision: str) -> None:
        """What the step just counted left: the learning rate, the loss scale, the weights' health."""
        self.final_lr, self.final_scale, self.final_finite, self.precision = \
            learning_rate, loss_scale, params_finite, precision

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

    def summary(self, source: str, layers: Sequence[Layer], optimizer: str) -> Dict[str, Any]:
        """The run's summary, with the keys and in the order run files and ``--json`` use."""
        o = self.first_origin
        values = {
            "source": source,
            "steps_run": self.steps,
            "finished": True,
            "error": None,
            "first_nonfinite_step": o.step if o else None,
            "origin": fmt.keyed(fmt.ORIGIN_KEYS, o.json(), "origin") if o else None,
            "nonfinite_steps": self.nonfinite_steps,
            "nonfinite_steps_per_layer": {l.path: n for l, n in zip(layers, self.per_layer) if n},
            "quarantined_samples": self.quarantined_samples(),
            "rollbacks": self.rollbacks,
            "skipped_steps": self.skipped_steps,
            "scaler_skipped_steps": self.scaler_skipped_steps,
            "final_loss_scale": fmt.number_json(self.final_scale),
            "precision": self.precision,
            "optimizer": optimizer,
            "final_learning_rate": fmt.number_json(self.final_lr),
            "steps_per_second": self.steps_per_second(),
            "stopped_by_policy": self.stopped_by_policy,
            "final_state_finite": self.final_finite,
            "challenge": None,  # challenges belong to NaNScope's own scenarios
        }
        return fmt.keyed(fmt.SUMMARY_KEYS, values, "summary")
