"""``nanscope.replay``: the failing step of a recorded loop computed again from its capsule, with the
user's own model, optimizer and ``compute_loss``, in a new process or on another machine.

    r = nanscope.replay("run.nsrun", model, optimizer, compute_loss)
    print(r.reproduced, r.origin, r.samples, r.what_if)

It says whether the step computes again bit for bit (the loss's bits and every layer's non-finite
counts), where the first non-finite value was born (op-level checks on, for the replay only), which
rows of the batch alone make the step non-finite, and which change would have kept it finite. The
results are added to the capsule in the run file, where ``nanscope replay FILE`` and the window
read them. See docs/python.md, "Replaying the failing step".
"""

from __future__ import annotations

import math
import sqlite3
import struct
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from . import format as fmt
from .batch_rows import bad_samples
from .capsule import Capsule, CapsuleError, choose_step, read_capsule, write_results
from .origin import Layer, apply_op_origin, explain, find_origin, layers_of
from .run_config import Optimizers, optimizer_list
from .replay_samples import find_samples, without_rows
from .replay_step import ComputeLoss, ReplayError, StepResult, StepRunner

@dataclass
class WhatIf:
    """One change computed from the capsule, and whether the run stayed finite with it."""

    change: str  # "lr=0.001", "clip=1", "precision=fp32", "without samples 13"
    start: str  # "step": the failing step alone; "snapshot": from the ring's first step
    finite: bool
    note: str = ""  # from which step it ran, where it failed instead, or why it was not tried

    def json(self) -> Dict[str, Any]:
        return {"change": self.change, "from": self.start, "finite": self.finite, "note": self.note or None}


@dataclass
class Replay:
    """What a replay found (``nanscope.replay``)."""

    step: int
    reason: str
    reproduced: bool  # bit for bit: the loss's bits and every layer's non-finite counts
    differs: str  # what differed, and the likely cause; "" when reproduced
    recorded_loss: float
    replayed_loss: float
    recorded_failed: bool
    replayed_failed: bool
    recorded_grad_norm: float
    replayed_grad_norm: float
    origin: Optional[Dict[str, Any]]  # phase, layer (by call), op, source line, explanation
    samples: List[int] = field(default_factory=list)  # dataset indices that alone make the step non-finite
    what_if: List[WhatIf] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    bisect_replays: int = 0
    coupled_by: List[str] = field(default_factory=list)
    device: str = "cpu"
    replay_ms: float = 0.0

    @property
    def verdict(self) -> str:
        return "reproduced" if self.reproduced else "not-reproduced"

    def json(self) -> Dict[str, Any]:
        """The keys of ``nanscope replay --json``, so the C++ side prints and shows them."""
        return {
            "type": "replay", "writer": "python", "step": self.step, "capsule": self.reason, "verdict": self.verdict,
            "tolerance": 0, "differs_at": None, "differs": self.differs or None,
            "recorded": {"failed": self.recorded_failed, "loss": fmt.number_json(self.recorded_loss),
                         "grad_norm": fmt.number_json(self.recorded_grad_norm)},
            "replayed": {"failed": self.replayed_failed, "loss": fmt.number_json(self.replayed_loss),
                         "grad_norm": fmt.number_json(self.replayed_grad_norm)},
            "origin": self.origin, "samples": self.samples, "bisect_replays": self.bisect_replays,
            "coupled_by": self.coupled_by, "what_if": [w.json() for w in self.what_if], "device": self.device,
            "threads": torch.get_num_threads(), "notes": self.notes, "load_ms": None,
            "replay_ms": round(self.replay_ms, 1), "total_ms": round(self.replay_ms, 1),
            "torch": torch.__version__,
        }

    def __str__(self) -> str:
        lines = [f"step {self.step} (capsule: {self.reason}) replayed on {self.device}",
                 f"verdict: {self.verdict}" + (f" ({self.differs})" if self.differs else ""),
                 f"  recorded: loss {self.recorded_loss:g}, gradient norm {self.recorded_grad_norm:g}, "
                 f"{'non-finite' if self.recorded_failed else 'finite'}",
                 f"  replayed: loss {self.replayed_loss:g}, gradient norm {self.replayed_grad_norm:g}, "
                 f"{'non-finite' if self.replayed_failed else 'finite'}"]
        if self.origin:
            o = self.origin
            lines.append(f"origin: phase {o['phase']}, layer '{o['layer'] or '(model)'}', op {o['op'] or '(not named)'}"
                         + (f" at {o['source']}" if o.get("source") else ""))
            lines.append(f"  {o['explanation']}")
        if self.samples:
            lines.append("samples that make the step non-finite: " + " ".join(map(str, self.samples)) +
                         f" ({self.bisect_replays} replays)")
        if self.what_if:
            lines.append("what if:")
            lines += [f"  {'from ' + w.start:<13} {w.change:<24} {'finite' if w.finite else 'non-finite'}"
                      + (f" ({w.note})" if w.note else "") for w in self.what_if]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _bits(value: float) -> bytes:
    return b"nan" if math.isnan(value) else struct.pack("<d", value)


Pattern = Dict[Tuple[int, str], Tuple[int, int, int]]  # (layer, kind) -> NaN, +Inf, -Inf counts


def _recorded(path: str, step: int) -> Tuple[Pattern, float]:
    """The step's non-finite counts by layer and kind, and its gradient norm (NaN where the file
    holds none: a non-finite norm is written as NULL)."""
    db = sqlite3.connect(path, timeout=10.0)
    try:
        pattern = {(layer, kind): (nan, pos, neg) for layer, kind, nan, pos, neg in db.execute(
            "SELECT layer, kind, nan, posinf, neginf FROM layer_nonfinite WHERE step = ?", (step,))}
        row = db.execute("SELECT grad_norm FROM steps WHERE step = ?", (step,)).fetchone()
    finally:
        db.close()
    return pattern, float("nan") if row is None or row[0] is None else float(row[0])


def _pattern(result: StepResult) -> Pattern:
    assert result.measures is not None
    found = {}
    for i, lh in enumerate(result.measures.layers):
        for kind in fmt.HEALTH_KINDS:
            h = getattr(lh, kind)
            if h.has_nonfinite():
                found[(i, kind)] = (h.nan, h.posinf, h.neginf)
    return found


def _check_model(capsule: Capsule, model: torch.nn.Module) -> None:
    """Raises ReplayError naming the parameters and buffers that differ from the capsule's."""
    def differences(kept: Dict[str, torch.Tensor], now: Dict[str, torch.Tensor], what: str) -> List[str]:
        said = [f"{what} '{n}' is not in the model" for n in kept if n not in now]
        said += [f"the model's {what} '{n}' is not in the capsule" for n in now if n not in kept]
        said += [f"{what} '{n}' has shape {list(now[n].shape)}, the capsule's {list(kept[n].shape)}"
                 for n in kept if n in now and now[n].shape != kept[n].shape]
        return said
    said = differences(capsule.params, dict(model.named_parameters()), "parameter") + \
        differences(capsule.buffers, dict(model.named_buffers()), "buffer")
    if said:
        more = f" (and {len(said) - 5} more)" if len(said) > 5 else ""
        raise ReplayError("the model is not the one the capsule was taken from: " + "; ".join(said[:5]) + more)


def replay(path: str, model: torch.nn.Module, optimizer: Optimizers = None,
           compute_loss: Optional[ComputeLoss] = None, step: Optional[int] = None,
           what_if: Optional[Dict[str, Any]] = None, samples: bool = True, clip: Optional[float] = None,
           write: bool = True, progress: Optional[Callable[[str], None]] = None) -> Replay:
    """Computes the capsule of ``step`` (default: the first non-finite step's) of run file ``path``
    again with ``model`` and ``optimizer`` built by the user's code, and ``compute_loss(model,
    batch)``: the forward and the loss of one step, as in the loop (``batch`` is what the loop
    passed as ``rec.step(..., batch=)``; without it, the positional inputs of the model's first
    forward, so ``model(*batch)``). ``what_if``: a change of your own (``{"lr": 1e-4, "clip": 0.5,
    "fp32": True, "without": [13]}``); ``clip``: the loop's own gradient clipping, which
    ``compute_loss`` does not hold. ``write=False`` leaves the run file as it is."""
    started = time.perf_counter()
    if compute_loss is None:
        raise ReplayError("nanscope.replay needs compute_loss(model, batch): the step's forward and loss")
    capsule = read_capsule(path, choose_step(path, step))
    _check_model(capsule, model)
    threads = torch.get_num_threads()
    torch.set_num_threads(capsule.threads)  # a CPU reduction's order, and so its bits, follow the threads
    try:
        result = _replay(path, capsule, model, optimizer, compute_loss, what_if, samples, clip,
                         progress or (lambda _: None))
    finally:
        torch.set_num_threads(threads)
    result.replay_ms = (time.perf_counter() - started) * 1000.0
    if write:
        write_results(path, capsule.step, result.json())
    return result


def _replay(path: str, capsule: Capsule, model: torch.nn.Module, optimizer: Optimizers, compute_loss: ComputeLoss,
            what_if: Optional[Dict[str, Any]], samples: bool, clip: Optional[float],
            say: Callable[[str], None]) -> Replay:
    runner = StepRunner(capsule, model, optimizer_list(optimizer, "nanscope.replay"), compute_loss, clip)
    notes = runner.notes
    other_torch, other_device = torch.__version__ != capsule.torch_version, str(runner.device) != capsule.device
    if other_torch:
        notes.append(f"recorded with torch {capsule.torch_version}, replayed with {torch.__version__}")
    if other_device:
        notes.append(f"recorded on {capsule.device}, replayed on {runner.device}")
    if not runner.optimizers:
        notes.append("no optimizer given: the update is not computed")
    elif capsule.ring_start is None:
        notes.append("the capsule holds no checked-finite state before the step: the update runs from the "
                     "optimizer's state as given")
    if not capsule.batch_given:
        notes.append("the loop passed no batch= to rec.step: compute_loss gets the model's first forward inputs")

    ring_holds = _reach_step(runner, say)
    if not ring_holds and capsule.ring_start is not None and runner.optimizers:
        notes.append(f"the steps from {capsule.ring_start} computed again do not end in the weights step "
                     f"{capsule.step} began with (something outside the recorded steps changed them, or a step "
                     "is not deterministic): the update ran from the optimizer's state they reached, and the "
                     "what-ifs ran from the step itself")
    say(f"computing step {capsule.step} again")
    runner.restore_step()
    first = runner.run(capsule.failing, probe_ops=False)
    layers = layers_of(list(model.named_modules()))
    recorded, recorded_norm = _recorded(path, capsule.step)
    reproduced, differs = _compare(capsule, first, recorded, layers)
    if not reproduced:
        runner.restore_step()
        again = runner.run(capsule.failing, probe_ops=False)
        if _bits(again.loss) != _bits(first.loss) or _pattern(again) != _pattern(first):
            differs += ("; two replays here differ too: the step is not deterministic (a nondeterministic op, or "
                        "randomness the capsule does not hold)")
        elif other_torch or other_device:
            differs += (f"; the step computes the same twice here: recorded with torch {capsule.torch_version} on "
                        f"{capsule.device}, replayed with {torch.__version__} on {runner.device}, which compute "
                        "differently")
        else:
            differs += ("; the step computes the same twice here, with the recording's torch and device: the model "
                        "or compute_loss does not compute what the loop did")
    result = Replay(step=capsule.step, reason=capsule.reason, reproduced=reproduced, differs=differs,
                    recorded_loss=capsule.loss, replayed_loss=first.loss,
                    recorded_failed=not math.isfinite(capsule.loss) or bool(recorded),
                    recorded_grad_norm=recorded_norm,
                    replayed_grad_norm=first.measures.grad_norm if first.measures else float("nan"),
                    replayed_failed=first.failed, origin=None, device=str(runner.device), notes=notes)
    bad_rows: List[int] = []
    if first.failed:
        say("finding the origin with op-level checks")
        runner.restore_step()
        result.origin = _origin(runner, capsule, layers)
        if samples:
            say("bisecting the batch")
            found = find_samples(runner, capsule)
            result.samples, result.bisect_replays, bad_rows = found.samples, found.replays, found.rows
            result.coupled_by = found.coupled_by
            notes += found.notes
    result.what_if = _what_ifs(runner, capsule, ring_holds, first.failed, bad_rows, result.samples, what_if or {},
                               say)
    runner.restore_step()  # the model and optimizer left as the step began
    return result


def _reach_step(runner: StepRunner, say: Callable[[str], None]) -> bool:
    """Computes the ring's steps from its state, so that the optimizers hold the state the failing
    step's update found; whether they end in the weights the step began with (False too without
    a ring)."""
    c = runner.capsule
    if c.ring_start is None or not runner.optimizers:
        runner.keep_step_optimizers()  # as given: a fresh optimizer, or one the caller loaded
        return False
    if c.ring_start < c.step:
        say(f"computing steps {c.ring_start} to {c.step - 1} from the ring's state")
    runner.restore(c.ring_params, c.ring_buffers, c.ring_optimizers)
    for s in c.ring:
        runner.run(s)
    runner.keep_step_optimizers()
    return runner.weights_equal(c.params)


def _compare(c: Capsule, r: StepResult, recorded: Pattern, layers: List[Layer]) -> Tuple[bool, str]:
    said = []
    if _bits(r.loss) != _bits(c.loss):
        said.append(f"loss {r.loss!r}, recorded {c.loss!r}")
    replayed = _pattern(r)
    if replayed != recorded:
        differ = sorted(set(k for k in set(replayed) | set(recorded) if replayed.get(k) != recorded.get(k)))
        names = [f"'{layers[layer].path if layer < len(layers) else layer}' {kind}" for layer, kind in differ[:3]]
        said.append("non-finite counts differ at " + ", ".join(names) + (" ..." if len(differ) > 3 else ""))
    return not said, "; ".join(said)


def _origin(runner: StepRunner, c: Capsule, layers: List[Layer]) -> Optional[Dict[str, Any]]:
    r = runner.run(c.failing, probe_ops=True)
    m = r.measures
    assert m is not None
    bad, rows_note = bad_samples(m.passes, c.failing.samples, c.batch_dim, c.time_first)
    origin = find_origin(c.step, layers, m.layers, m.calls, m.grad_events, m.input_health, m.loss_health, True)
    if not origin.valid():
        return None
    if m.op_origin is not None:
        apply_op_origin(origin, m.op_origin, layers)
    origin.explanation = explain(origin, m.input_health, bad, rows_note)
    return fmt.keyed(fmt.ORIGIN_KEYS, origin.json(), "origin")


def _what_ifs(runner: StepRunner, c: Capsule, ring: bool, failed: bool, bad_rows: List[int], samples: List[int],
              asked: Dict[str, Any], say: Callable[[str], None]) -> List[WhatIf]:
    """``ring``: the ring's steps computed again reach the step's weights, so changes run from there."""
    out: List[WhatIf] = []
    start = "snapshot" if ring else "step"
    from_note = f"from step {c.ring_start}" if ring else \
        "the capsule holds no checked-finite state before the step" if c.ring_start is None else \
        "the ring's steps do not reach the step's weights: tried on the step alone"

    def from_ring(change: str, **kwargs: Any) -> None:
        say(f"what if {change}")
        if ring:
            bad = runner.run_from_ring(**kwargs)
        else:
            runner.restore_step()
            bad = None if runner.run(c.failing, **kwargs).finite_with_update else c.step
        out.append(WhatIf(change, start, bad is None, from_note + ("" if bad is None else f"; non-finite at step {bad}")))

    def at_step(change: str, **kwargs: Any) -> None:
        say(f"what if {change}")
        runner.restore_step()
        out.append(WhatIf(change, "step", runner.run(c.failing, **kwargs).finite_with_update))

    if not failed and not asked:
        return out
    lr0 = c.failing.lrs[0][0] if c.failing.lrs and c.failing.lrs[0] else 0.0
    if runner.optimizers:
        from_ring(f"lr={lr0 / 10:g}", lr_factor=0.1)
        from_ring("clip=1", clip=1.0)
    if c.autocast:
        at_step("precision=fp32", fp32=True)
    if bad_rows:
        at_step("without samples " + " ".join(map(str, samples)), batch=without_rows(c, bad_rows))
    if asked:
        unknown = set(asked) - {"lr", "clip", "fp32", "without"}
        if unknown:
            raise ReplayError(f"what_if: unknown changes {sorted(unknown)} (known: lr, clip, fp32, without)")
        parts = [f"{k}={v}" for k, v in asked.items()]
        kwargs: Dict[str, Any] = {"lr": asked.get("lr"), "clip": asked.get("clip"), "fp32": bool(asked.get("fp32"))}
        if "without" in asked:
            kwargs["batch"] = without_rows(c, _rows_of(c, list(asked["without"])))
        if ("lr" in asked or "clip" in asked) and "without" not in asked and "fp32" not in asked:
            from_ring(" ".join(parts), lr=kwargs["lr"], clip=kwargs["clip"])
        else:
            at_step(" ".join(parts), **kwargs)
    return out


def _rows_of(c: Capsule, indices: List[int]) -> List[int]:
    """The batch's rows of dataset ``indices`` (rows themselves when the step named no samples)."""
    samples = c.failing.samples
    if not samples:
        return indices
    missing = [i for i in indices if i not in samples]
    if missing:
        raise ReplayError(f"what_if without: samples {missing} are not in step {c.step}'s batch")
    return [samples.index(i) for i in indices]


__all__ = ["CapsuleError", "Replay", "ReplayError", "WhatIf", "replay"]
