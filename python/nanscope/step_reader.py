"""A step's end: its one host read and what it measured (``StepMeasures``).

Everything a step measured is read to the host at once (``StatBatch.read_with``). Under a guard
the decision before the update reads first; the loss and update ratios, which only exist after the
update, then wait for the next step's read instead of making a second one: the step is *held*
(``StepMeasures.late``) until ``complete`` fills them in. Holding pays only where a read costs, on a
GPU; tests set ``HOLD_ON_CPU`` (with ``health.DEFER_CPU``) to take that path on the CPU.
"""

from __future__ import annotations

import math
import struct
import time
from typing import Any, List, Optional, Sequence

import torch

from .health import Health, StatBatch
from .ops import OpOrigin
from .origin import LayerHealth
from .step_state import Late, StepMeasures, StepState, calls_and_events, total_norm, value_of
from .update_hooks import UpdateRatios

HOLD_ON_CPU = False

_ABSENT = Health()  # nothing observed: shared, as a Health handed out is never changed


class StepReader:
    """Reads steps; holds the late numbers of a held step until a read takes them."""

    def __init__(self, layers: int, ratios: UpdateRatios, scaler: Any,
                 optimizers: Sequence[torch.optim.Optimizer]) -> None:
        self._layers = layers
        self._ratios = ratios
        self.scaler = scaler
        self.optimizers = list(optimizers)
        self._late: Optional[Late] = None  # a held step's, until a read takes them

    def read(self, batch: StatBatch) -> List[object]:
        """``batch``'s read, which also reads the late numbers of a step held before (one read)."""
        late, self._late = self._late, None
        values, late_values = batch.read_with(late.tensor if late is not None else None)
        if late is not None:
            late.values = late_values
        return values

    def finish(self, s: StepState, loss: torch.Tensor, op_origin: Optional[OpOrigin]) -> StepMeasures:
        """Ends step ``s``: one host read of everything it measured, then the exact passes.

        A step a guard read early (at its decision) and found finite makes no second read: its
        loss and update ratios are left to the next read (``StepMeasures.late``; ``complete``)."""
        loss = loss.detach().reshape(())
        weights_before = s.weights_before  # taken before any update ran, or None
        update = self._update_norms(s)
        late: Optional[Late] = None
        if self._holds(s, loss, update):
            late = Late(torch.cat([loss.reshape(1).to(torch.float64)] +
                                  ([update.to(torch.float64)] if update is not None else [])))
            self._late = late
            loss_slot = update_slot = None
            values = s.batch.read()  # all read already
        else:
            loss_slot = s.batch.add(loss)
            update_slot = s.batch.add_vector(update) if update is not None else None
            values = self.read(s.batch)
        if any(values[slot] != 0 for slot in s.found_inf_slots):  # a fused kernel skipped the update
            s.optimizer_stepped, update_slot = False, None

        def merged(slots: List[int]) -> Health:
            if len(slots) == 1:  # the common case; a Health read is never changed afterwards
                return values[slots[0]]  # type: ignore[return-value]
            if not slots:
                return _ABSENT
            h = Health()
            for slot in dict.fromkeys(slots):  # a tensor two calls share counts once
                h.merge(values[slot])  # type: ignore[arg-type]
            return h

        n = self._layers
        outputs: List[List[int]] = [[] for _ in range(n)]
        inputs: List[List[int]] = [[] for _ in range(n)]
        grads: List[List[int]] = [[] for _ in range(n)]
        for k, (module, in_slots, out_slots) in enumerate(s.calls):
            outputs[module] += out_slots
            inputs[module] += in_slots
            grads[module] += s.call_out_grads.get(k, ())
        layers: List[LayerHealth] = []
        for i in range(n):
            lh = LayerHealth(forward=merged(outputs[i]), grad=merged(grads[i]), params=merged(s.params.get(i, [])),
                             param_grads=merged(s.param_grads.get(i, [])))
            lh.input_finite = not merged(inputs[i]).has_nonfinite()
            layers.append(lh)
        # The calls and gradient events only matter to a step's origin: a finite step skips them.
        finite = not any(isinstance(v, Health) and v.has_nonfinite() for v in values)
        calls, events = ([], []) if finite else calls_and_events(s, merged)
        if update_slot is not None:
            self._ratios.apply(values[update_slot], layers)  # type: ignore[arg-type]
        input_health = merged([slot for slots, _ in s.passes for slot in slots])
        loss_health = values[loss_slot] if loss_slot is not None else _ABSENT  # a held step's: see complete
        assert isinstance(loss_health, Health)
        scale = float(values[s.scale_slot]) if s.scale_slot is not None else s.scale  # type: ignore[arg-type]
        scaling = self.scaler is not None and self.scaler.is_enabled()
        grad_norm = total_norm([lh.param_grads for lh in layers]) / (scale if scaling and scale > 0 else 1.0)
        clipped = [float(values[slot]) for slot in s.clipped_slots]  # type: ignore[arg-type]
        from_others = math.isfinite(grad_norm) and not all(
            math.isfinite(values[slot]) for slot in s.reduced_slots)  # type: ignore[arg-type]
        grad_norm_clipped = (sum(v * v for v in clipped) ** 0.5) if clipped else grad_norm
        lr = s.learning_rate
        if lr is None:
            lr = float(self.optimizers[0].param_groups[0]["lr"]) if self.optimizers else 0.0
        return StepMeasures(
            layers=layers, calls=calls, grad_events=events, input_health=input_health,
            passes=[t for _, t in s.passes if t is not None] if input_health.has_nonfinite() else [],
            loss_health=loss_health, loss=value_of(loss_health), grad_norm=grad_norm,
            grad_norm_clipped=grad_norm_clipped, learning_rate=lr, loss_scale=scale if scaling else 1.0,
            loss_scaling=scaling, optimizer_stepped=s.optimizer_stepped, decision=s.decision, precision=s.precision,
            op_origin=op_origin,
            nonfinite_from_other_ranks=from_others, unmeasured=list(dict.fromkeys(s.batch.unmeasured)), all_finite=finite,
            step_ms=(time.perf_counter() - s.started) * 1000.0, inputs=s.inputs, weights_before=weights_before,
            learning_rates=s.learning_rates, late=late, clip=s.clip)

    def _holds(self, s: StepState, loss: torch.Tensor, update: Optional[torch.Tensor]) -> bool:
        """Whether the step's loss and update ratios can wait for the next read: a guard read
        the step early, found everything finite and nothing is left unread but them, and they
        live where a read costs (a GPU's)."""
        if not s.read_early or s.batch.pending() or (loss.device.type == "cpu" and not HOLD_ON_CPU):
            return False
        if update is not None and update.device != loss.device:
            return False
        values = s.batch.read()  # read already: no copy
        for v in values:
            if isinstance(v, Health):
                if v.has_nonfinite():
                    return False
            elif isinstance(v, float) and not math.isfinite(v):
                return False
        return not any(values[slot] != 0 for slot in s.found_inf_slots)

    def complete(self, m: StepMeasures) -> None:
        """A held step's loss and update ratios, from the read that took them (or a read now)."""
        late, m.late = m.late, None
        if late is None:
            return
        if late.values is None:  # no step has read since (the run ends, or a flush)
            if self._late is late:
                self._late = None
            late.values = StatBatch().read_with(late.tensor)[1]
        assert late.values is not None
        value = late.values[0]
        m.loss, m.loss_health = value, scalar_health(value)
        m.all_finite = m.all_finite and math.isfinite(value)
        if len(late.values) > 1:
            self._ratios.apply(late.values[1:], m.layers)

    def _update_norms(self, s: StepState) -> Optional[torch.Tensor]:
        """|w after - w before| and |w before| of every moving weight, to be read with the rest."""
        if s.weights_before is None or not s.optimizer_stepped:
            return None
        norms = self._ratios.norms(s.weights_before)
        s.weights_before = None
        return norms


def scalar_health(value: float) -> Health:
    """A one-element tensor's health from its value, as a read of it gives (the norm in float32)."""
    if math.isnan(value):
        return Health(present=True, numel=1, nan=1)
    if math.isinf(value):
        return Health(present=True, numel=1, posinf=int(value > 0), neginf=int(value < 0))
    return Health(present=True, numel=1, min=value, max=value, norm=struct.unpack("f", struct.pack("f", abs(value)))[0])
