"""The forecasts of the C++ core (core/src/session/trend_forecast.cpp) that a recorded loop can
compute, with the same rules and words: for now the update-ratio warning."""

from __future__ import annotations

import math
from typing import List, Sequence, Tuple

from .origin import Layer, LayerHealth

LARGE_RUNNING = 3  # |dw| / |w| >= 1 this many steps running: diverging
TINY_RUNNING = 20  # below TINY this many steps running while gradients flow: lost to rounding
TINY = 1e-7  # fp32 keeps about 7 significant digits


class UpdateWarnings:
    """One warning per layer whose updates are far outside the usual 1e-4 to 1e-2 of its weights."""

    def __init__(self, layers: Sequence[Layer]) -> None:
        self._layers = layers
        self._large = [0] * len(layers)
        self._tiny = [0] * len(layers)
        self._warned = [False] * len(layers)

    def add(self, health: Sequence[LayerHealth], learning_rate: float) -> List[Tuple[int, str]]:
        """Follows a finite step; returns (layer, text) for each warning due now."""
        out = []
        for i, h in enumerate(health):
            ratio = h.update_ratio
            flowing = h.param_grads.present and h.param_grads.norm > 0.0 and learning_rate > 0.0
            self._large[i] = self._large[i] + 1 if math.isfinite(ratio) and ratio >= 1.0 else 0
            self._tiny[i] = self._tiny[i] + 1 if math.isfinite(ratio) and ratio < TINY and flowing else 0
            if self._warned[i] or (self._large[i] < LARGE_RUNNING and self._tiny[i] < TINY_RUNNING):
                continue
            self._warned[i] = True
            name = self._layers[i].path or "the model"
            if self._large[i] >= LARGE_RUNNING:
                text = (f"{name} weights move by {ratio:.2g} times their size a step ({LARGE_RUNNING} steps running; "
                        "usual: 1e-4 to 1e-2): updates this large diverge, lower the learning rate")
            else:
                text = (f"{name} weights barely move: |dw| / |w| is {ratio:.2g} ({TINY_RUNNING} steps running; "
                        "usual: 1e-4 to 1e-2): updates this small are lost to rounding, raise the learning rate")
            out.append((i, text))
        return out


class LossScaleWarning:
    """The C++ loss-scale warning: under loss scaling, a scale that fell below 1 and keeps falling."""

    def __init__(self) -> None:
        self._lowest_below_one = 1.0
        self._warned = False

    def add(self, loss_scaling: bool, scale: float) -> List[str]:
        if not loss_scaling or self._warned or not scale < 1.0:
            return []
        out = []
        if scale < self._lowest_below_one < 1.0:
            self._warned = True
            out.append(f"the loss scale fell to {scale:.3g} and keeps falling: gradients overflow fp16 even unscaled, "
                       "and the scaler has nothing left to give")
        self._lowest_below_one = min(self._lowest_below_one, scale)
        return out
