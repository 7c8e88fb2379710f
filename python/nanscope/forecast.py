"""The forecasts of the C++ core (core/src/rules/trend_forecast.cpp), with the same rules and
words: a value growing steadily towards its precision's largest finite value (overflow), or
shrinking towards its smallest (vanishing, fp16 and bf16), within a horizon of steps; update ratios
far from the usual range; a loss scale that keeps falling below 1."""

from __future__ import annotations

import math
from collections import deque
from typing import Deque, List, Optional, Sequence, Tuple

from . import format as fmt
from .health import Health
from .messages import Message, layer_name, short_number
from .origin import Layer, LayerHealth

WINDOW = 16  # steps a straight fit looks back over
MIN_POINTS = 4  # before any trend is trusted
MIN_FIT = 0.8  # the share of the spread a straight fit must explain
# Noise must not pass for growth: a fitted line must rise half a decade over its window, and
# accelerating growth a whole decade over its last three steps.
MIN_FITTED_RISE = 0.5
MIN_ACCELERATING_RISE = 1.0
HORIZON = 50  # the C++ side's default (--forecast-horizon)


class Track:
    """One value's recent log10 points, and whether it was warned of."""

    def __init__(self) -> None:
        self.points: Deque[Tuple[int, float]] = deque()
        self.warned = False


def steady_growth(t: Track) -> float:
    """Decades a step: accelerating (three rising increments) or a straight fit's slope; 0: none."""
    p = t.points
    n = len(p)
    if n < MIN_POINTS:
        return 0.0

    def rise(k: int) -> float:
        return p[n - k][1] - p[n - k - 1][1]

    accelerating = 0.0
    if rise(3) > 0 and rise(2) > rise(3) and rise(1) > rise(2) and rise(1) + rise(2) + rise(3) >= MIN_ACCELERATING_RISE:
        accelerating = (rise(1) + rise(2) + rise(3)) / 3.0
    mx = sum(x for x, _ in p) / n
    my = sum(y for _, y in p) / n
    sxx = sum((x - mx) ** 2 for x, _ in p)
    sxy = sum((x - mx) * (y - my) for x, y in p)
    syy = sum((y - my) ** 2 for _, y in p)
    linear = 0.0
    span = p[-1][0] - p[0][0]
    if sxx > 0 and syy > 0 and sxy > 0 and sxy * sxy / (sxx * syy) >= MIN_FIT and sxy / sxx * span >= MIN_FITTED_RISE:
        linear = sxy / sxx
    return max(accelerating, linear)


def follow(t: Track, step: int, log_value: float, top: float, part_of_the_way: float,
           horizon: int = HORIZON) -> Optional[Tuple[float, float]]:
    """(growth a step, steps left) when the value will reach `top` within the horizon, once."""
    if not math.isfinite(log_value):
        t.points.clear()  # a non-finite or zero value breaks the trend
        return None
    while t.points and t.points[-1][0] >= step:
        t.points.pop()
    t.points.append((step, log_value))
    if len(t.points) > WINDOW:
        t.points.popleft()
    if t.warned or log_value < top * part_of_the_way:  # far from the limit: early training moves fast
        return None
    growth = steady_growth(t)
    if growth <= 0.0:
        return None
    steps_left = (top - log_value) / growth
    if steps_left > horizon:
        return None
    t.warned = True
    return growth, steps_left


def _forecast(id: str, args: List[str], steps_left: float) -> Message:
    """A forecast's message: its id with "-1" when one step is left, the steps last (forecast())."""
    n = max(1, int(math.floor(steps_left + 0.5)))
    return Message(id + "-1" if n == 1 else id, args + [str(n)])


def overflow_message(subject: str, name: str, growth: float, steps_left: float, precision: str) -> Message:
    """``subject`` "output" (of the module ``name``) or "loss" (``name`` empty)."""
    return _forecast(f"overflow-{subject}", [name, short_number(10.0 ** growth, 2), precision], steps_left)


def vanishing_message(subject: str, name: str, growth: float, steps_left: float, smallest: float,
                      precision: str) -> Message:
    """``subject`` "output" or "gradient" (into the module ``name``)."""
    return _forecast(f"vanishing-{subject}", [name, short_number(10.0 ** -growth, 2), precision,
                                             short_number(smallest, 2)], steps_left)


def _abs_max(h: Health) -> float:
    return math.nan if h.has_nonfinite() or not h.present else max(abs(h.min), abs(h.max))


class TrendForecast:
    """Overflow and vanishing forecasts of each computing module's output (and the gradient into
    it) and of the loss, update-ratio and loss-scale warnings: the C++ TrendForecast, whose
    ``add`` it follows step by step and in its order (the loss scale; then, layer by layer, the
    update ratio and the trends; then the loss)."""

    def __init__(self, layers: Sequence[Layer], horizon: int = HORIZON) -> None:
        self._layers = layers
        self._horizon = horizon
        parents = {layer.parent for layer in layers}
        self._computes = [layer.id not in parents for layer in layers]  # a container's output is its child's
        self._output = [Track() for _ in layers]
        self._output_falls = [Track() for _ in layers]
        self._grad_falls = [Track() for _ in layers]
        self._loss = Track()
        self._updates = UpdateWarnings(layers)
        self._scale = LossScaleWarning()

    def add(self, step: int, health: Sequence[LayerHealth], loss: float, loss_health: Health, precision: str,
            learning_rate: float, loss_scaling: bool, loss_scale: float, failed: bool) -> List[Tuple[int, Message]]:
        """Follows one step; (layer or -1, message) for each warning due now. A failed step (a
        non-finite value the loss scaler cannot absorb) is followed for its loss scale only."""
        if self._horizon <= 0:
            return []
        out: List[Tuple[int, Message]] = [(-1, said) for said in self._scale.add(loss_scaling, loss_scale)]
        if failed:  # the value is already here: nothing to forecast on this step
            return out
        limits = fmt.PRECISION_LIMITS[precision]
        top, smallest = limits["largest_finite"], limits["smallest_positive"]
        reduced = precision != "fp32"
        for i, h in enumerate(health):
            said = self._updates.follow(i, h, learning_rate)
            if said is not None:
                out.append((i, said))
            if not self._computes[i]:
                continue
            name = layer_name(self._layers[i].path)
            if h.forward.present:
                value = _abs_max(h.forward)
                self._overflow(self._output[i], step, value, top, i, "output", name, precision, out)
                if reduced:
                    self._vanishing(self._output_falls[i], step, value, smallest, i, "output", name, precision, out)
            if reduced and h.grad.present:
                self._vanishing(self._grad_falls[i], step, _abs_max(h.grad), smallest, i, "gradient", name,
                                precision, out)
        # The loss is computed in fp32 under mixed precision (autocast): fp32's limit.
        loss_value = math.nan if loss_health.has_nonfinite() else abs(loss)
        self._overflow(self._loss, step, loss_value, fmt.PRECISION_LIMITS["fp32"]["largest_finite"], -1, "loss", "",
                       "fp32", out)
        return out

    def _overflow(self, t: Track, step: int, value: float, limit: float, layer: int, subject: str, name: str,
                  precision: str, out: List[Tuple[int, Message]]) -> None:
        log_value = math.log10(value) if value > 0.0 else math.nan
        found = follow(t, step, log_value, math.log10(limit), 0.25, self._horizon)
        if found:
            out.append((layer, overflow_message(subject, name, found[0], found[1], precision)))

    def _vanishing(self, t: Track, step: int, value: float, smallest: float, layer: int, subject: str, name: str,
                   precision: str, out: List[Tuple[int, Message]]) -> None:
        # Falling values are followed as rising ones: -log10 of the value against -log10 of the limit.
        log_value = -math.log10(value) if value > 0.0 else math.nan
        found = follow(t, step, log_value, -math.log10(smallest), 0.5, self._horizon)
        if found:
            out.append((layer, vanishing_message(subject, name, found[0], found[1], smallest, precision)))


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

    def follow(self, i: int, h: LayerHealth, learning_rate: float) -> Optional[Message]:
        """Follows layer ``i`` on a step that did not fail; its warning when one is due now."""
        ratio = h.update_ratio
        flowing = h.param_grads.present and h.param_grads.norm > 0.0 and learning_rate > 0.0
        self._large[i] = self._large[i] + 1 if math.isfinite(ratio) and ratio >= 1.0 else 0
        self._tiny[i] = self._tiny[i] + 1 if math.isfinite(ratio) and ratio < TINY and flowing else 0
        if self._warned[i] or (self._large[i] < LARGE_RUNNING and self._tiny[i] < TINY_RUNNING):
            return None
        self._warned[i] = True
        large = self._large[i] >= LARGE_RUNNING
        return Message("updates-large" if large else "updates-tiny",
                       [layer_name(self._layers[i].path), short_number(ratio, 2),
                        str(LARGE_RUNNING if large else TINY_RUNNING)])


class LossScaleWarning:
    """The C++ loss-scale warning: under loss scaling, a scale that fell below 1 and keeps falling."""

    def __init__(self) -> None:
        self._lowest_below_one = 1.0
        self._warned = False

    def add(self, loss_scaling: bool, scale: float) -> List[Message]:
        if not loss_scaling or self._warned or not scale < 1.0:
            return []
        out = []
        if scale < self._lowest_below_one < 1.0:
            self._warned = True
            out.append(Message("loss-scale-falling", [short_number(scale, 3)]))
        self._lowest_below_one = min(self._lowest_below_one, scale)
        return out
