"""``nanscope.record``: a user's own PyTorch training loop, recorded into a NaNScope run file."""

from __future__ import annotations

import datetime
import json
import os
import sqlite3
import sys
import uuid
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import torch

from . import format as fmt
from .ddp import check_buckets, inner_module, is_ddp
from .forecast import TrendForecast
from .batch_rows import bad_samples, sequence_first
from .capsule import INSERT as INSERT_CAPSULE, capsule_row
from .capsule_keeper import CapsuleKeeper
from .chunks import StepFacts, step_fate
from .guard import DECISIONS, Decision, Guard, NonFiniteError, Paused, Stopped, decision_message, state_finite
from .event_log import EventLog
from .layer_keeper import LayerKeeper
from .messages import Message
from .origin import apply_op_origin, explain, find_origin
from .probe import StepProbe
from .step_state import StepMeasures
from .steerer import Steerer
from .steering import RequestFile
from .tally import StepTally
from .retention import KeepPolicy
from .rows import health_columns, index_list
from .run_config import Optimizers, optimizer_label, optimizer_list
from .run_header import RunHeader, write_run_header
from .writer import RunFileWriter, WriteError, create_run_file, refuse_to_replace


class RecorderClosed(RuntimeError):
    """``step`` was called on a recorder that was already closed."""


class Recorder:
    """Records one training run. Use ``nanscope.record(...)``; see docs/python.md."""

    def __init__(self, model: torch.nn.Module, path: str, optimizer: Optimizers = None,
                 scaler: Any = None, name: Optional[str] = None, errors: str = "raise", ops: bool = False,
                 keep: Union[str, int] = "auto", batch_dim: Optional[int] = None, on_nonfinite: str = "record",
                 overwrite: bool = False, steer: bool = True, pause_timeout: float = 300.0,
                 pause_default: str = "skip", capsules: bool = True, capsule_at: Sequence[int] = ()) -> None:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"nanscope.record: model must be a torch.nn.Module, not {type(model).__name__}")
        if errors not in ("raise", "continue"):
            raise ValueError(f"nanscope.record: errors must be 'raise' or 'continue', not {errors!r}")
        policy = KeepPolicy.parse(keep)
        optimizers = optimizer_list(optimizer, "nanscope.record")
        optimizer = optimizers[0] if optimizers else None
        if batch_dim is not None and (not isinstance(batch_dim, int) or batch_dim < 0):
            raise ValueError(f"nanscope.record: batch_dim must be a dimension (0, 1, ...), not {batch_dim!r}")
        self._batch_dim = batch_dim
        wrapper, model = model, inner_module(model)
        if not any(True for _ in model.parameters()):
            raise ValueError("nanscope.record: the model has no parameters: there is no training to record")
        self.path = os.fspath(path)
        self.run_id = uuid.uuid4().hex  # names this run to the requests that steer it
        self.errors = errors
        self.error: Optional[str] = None
        self._closed = False
        self._step = 0  # steps recorded
        self._ended = 0  # steps ended (rec.step calls): one more while a step is held
        # A guarded step read early and found finite waits here for its loss and update ratios,
        # which the next step's read brings (StepMeasures.late): (measures, samples, batch).
        self._held: Optional[Tuple[StepMeasures, Optional[List[int]], Any]] = None
        script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] not in ("", "-c") else ""
        self.name = name or (os.path.basename(script) if script else "python")
        if pause_default not in DECISIONS + ("raise",):
            raise ValueError(f"nanscope.record: pause_default must be one of {', '.join(DECISIONS + ('raise',))}, "
                             f"not {pause_default!r}")
        if not isinstance(pause_timeout, (int, float)) or not pause_timeout >= 0:
            raise ValueError(f"nanscope.record: pause_timeout must be a number of seconds (0 or more), not "
                             f"{pause_timeout!r}")
        self._model = model
        self._guard = Guard(on_nonfinite, model, optimizers, wait=self._wait_for_decision)
        self._events = EventLog()  # the file's, once it is open
        self._steerer = Steerer(None, self._guard, optimizers, lambda *event: self._events.steered(*event),
                                self.flush, float(pause_timeout), pause_default)
        # The dataset indices of rows seen non-finite (named by `samples`), for the loader to leave out.
        self.quarantined: Set[int] = set()
        # Steering may turn a guard on later: its decision point is then in place from the start
        # (it reads nothing while the policy is "record").
        guarded = bool(optimizers) and (self._guard.active or steer)
        self._probe = StepProbe(model, optimizers, scaler, ops=ops, decide=self._decide if guarded else None,
                                on_begin=self._begin_step, clip=lambda: self._steerer.clip)
        # A capsule holds the weights as the step began, which only the optimizer's step tells.
        self._capsules = CapsuleKeeper(model, optimizers, self._probe.moving, [int(s) for s in capsule_at]) \
            if capsules and optimizers else None
        self._time_first = sequence_first(model)
        self._unmeasured_said: set = set()
        # Data-parallel: each rank records its own gradients, measured before DDP averages them.
        self.ranks_own_gradients = is_ddp(wrapper) and check_buckets(
            wrapper, self._probe.measure_bucket, self._probe.measure_reduced)
        self._from_other_ranks: Optional[int] = None  # the step whose all-reduce first brought NaN
        self.layers = self._probe.layers
        self._forecasts = TrendForecast(self.layers)
        self._optimizer = optimizer
        self._writer: Optional[RunFileWriter] = None
        self._keeper: Optional[LayerKeeper] = None
        # The summary's tally, kept as the C++ StepTally keeps it.
        self._tally = StepTally(len(self.layers),
                                float(optimizer.param_groups[0]["lr"]) if optimizer is not None else 0.0)
        self._previous_params_finite = True
        try:
            self._open(model, optimizer, scaler, script, policy, overwrite, steer)
        except (OSError, WriteError, sqlite3.Error) as e:
            self._probe.close()
            message = f"nanscope.record: {e}" if isinstance(e, FileExistsError) else \
                f"nanscope.record: cannot write {self.path}: {e}"
            if errors == "raise":
                if isinstance(e, FileExistsError):  # a refusal: the one line says it all
                    raise FileExistsError(message) from None
                raise OSError(message) from e
            warnings.warn(message + " (training goes on unrecorded)", RuntimeWarning, stacklevel=3)
            self.error = message
            self._closed = True

    # -- the file ---------------------------------------------------------------------------------

    def _open(self, model: torch.nn.Module, optimizer: Optional[torch.optim.Optimizer], scaler: Any,
              script: str, policy: KeepPolicy, overwrite: bool, steer: bool) -> None:
        if os.path.isdir(self.path):
            rank = os.environ.get("RANK")
            if rank is None or os.environ.get("WORLD_SIZE") is None:
                raise IsADirectoryError(f"{self.path} is a folder (a folder takes the run files of a data-parallel "
                                        "job's ranks: RANK and WORLD_SIZE are not set)")
            # A job's run folder, as `nanscope FOLDER` and `nanscope report FOLDER` read it.
            self.path = os.path.join(self.path, f"rank-{int(rank)}.nsrun")
        refuse_to_replace(self.path, overwrite)
        create_run_file(self.path)
        self._writer = RunFileWriter(self.path, on_error=self._on_write_error)
        self._keeper = LayerKeeper(self._writer, len(self.layers), policy)
        self._events = EventLog(self._writer, self._keeper)
        device = write_run_header(self._writer, RunHeader(
            name=self.name, script=script, model=model, optimizer=optimizer, optimizers=self._probe.optimizers,
            scaler=scaler, ops=self._probe.ops, batch_dim=self._batch_dim, policy=self._guard.policy,
            max_rollbacks=self._guard.max_rollbacks, run_id=self.run_id, steerable=steer,
            not_measured=[{"layer": path, "why": why.text()} for path, why in self._probe.not_measured],
            learning_rate=self._tally.final_lr, keep=self._keeper.keep_json()), self.layers)
        self._events.add("info", 0, -1, Message("python-recording", [self.name, device, torch.__version__,
                                                               optimizer_label(optimizer)]))
        for path, why in self._probe.not_measured:
            self._events.add("warning", 0, -1, why)
        self._writer.flush()
        if self._writer.error:
            raise WriteError(self._writer.error)
        if steer:
            self._steerer.requests = RequestFile(self.path, self.run_id)

    def _on_write_error(self, message: str) -> None:
        self.error = message
        if self.errors == "continue":
            warnings.warn(f"nanscope: {message} (training goes on unrecorded)", RuntimeWarning)

    # -- a step -----------------------------------------------------------------------------------

    def step(self, loss: Any, samples: Optional[Iterable[int]] = None, batch: Any = None) -> None:
        """Ends one training step: call it after ``optimizer.step()`` (or ``scaler.update()``).

        ``loss`` is the step's loss (a one-element tensor or a number); ``samples`` the dataset
        indices of the batch's rows, so that a bad sample is named by its index; ``batch`` what
        the step's ``compute_loss`` takes, for a capsule of the step (``nanscope.replay``): any
        nesting of tensors, tuples, lists and dicts, kept by reference (not copied).
        """
        if self._closed and self.error is None:
            raise RecorderClosed("nanscope: step() after the recorder was closed")
        if isinstance(loss, (int, float)):
            loss = torch.tensor(float(loss))
        if not isinstance(loss, torch.Tensor):
            raise TypeError(f"nanscope: step(loss): the loss must be a tensor or a number, not {type(loss).__name__}")
        if loss.numel() != 1:
            raise ValueError(f"nanscope: step(loss): the loss must hold one value (a scalar), not shape "
                             f"{list(loss.shape)}: reduce it first, e.g. loss.mean()")
        indices = [int(i) for i in samples] if samples is not None else None
        if self._closed:  # recording stopped after an error: training goes on
            return
        stopped: Optional[Union[NonFiniteError, Stopped]] = None
        try:
            if self._probe.failure is None:
                m = self._probe.finish(loss)
                self._ended += 1
                self._record_held()
                if self._capsules is not None:
                    self._capsules.step_ended(self._ended - 1, m)
                if m.late is not None:
                    self._held = (m, indices, batch)
                else:
                    stopped = self._record(m, indices, batch)
        except (WriteError, sqlite3.Error, OSError):
            raise
        except Exception as e:  # noqa: BLE001 - an error of the recorder's own never reaches the loop
            self._probe.fail(e)
        if self._probe.failure is not None:
            self._stop_after_failure(self._probe.failure)
            return
        if self.error is not None:
            self._stop_after_error()
        if isinstance(stopped, Stopped):
            self.close()  # told to stop: the file ends cleanly before the loop hears of it
            raise stopped
        if stopped is not None:
            self.flush()  # the step that stopped the loop is in the file before the loop hears of it
            raise stopped
        if not self._closed:
            try:
                self._steerer.between_steps(self._ended)
            except (OSError, ValueError) as e:  # the request file went wrong: the loop goes on, unsteered
                warnings.warn(f"nanscope: steering stopped: {e}", RuntimeWarning, stacklevel=2)
                self._steerer.requests = None

    def _begin_step(self) -> None:
        buffers = self._guard.begin_step()
        if self._capsules is not None:
            self._capsules.begin_step(self._ended, buffers)

    def _record_held(self) -> None:
        """Records the held step, with the late numbers the last read took (or a read now)."""
        held, self._held = self._held, None
        if held is not None:
            self._probe.complete(held[0])
            self._record(*held)  # a held step's update ran: it never stops the loop

    def _wait_for_decision(self, step: int) -> Paused:
        return self._steerer.wait(step)

    def _decide(self, optimizer: torch.optim.Optimizer, finite: Callable[[], bool],
                earlier: Optional[Decision]) -> Optional[Decision]:
        return self._guard.decide(self._ended, optimizer, finite, earlier)

    @property
    def finite(self) -> bool:
        """Whether the model's parameters and buffers are all finite now: guard a checkpoint with
        it (``if rec.finite: torch.save(...)``). One reduction over the model and one host read."""
        return state_finite(self._model)

    @property
    def policy(self) -> str:
        """What a step with non-finite gradients does to the update (``on_nonfinite``)."""
        return self._guard.policy

    def _stop_after_failure(self, failure: str) -> None:
        """The recorder failed inside (a bug, or a model it cannot follow): the steps so far stay
        in the file, which is closed with the reason, and the loop trains on unrecorded."""
        message = (f"the recorder stopped at step {self._step}: {failure}; the training went on unrecorded "
                   "(please report this with the model's class)")
        warnings.warn(f"nanscope: {message}", RuntimeWarning, stacklevel=3)
        self.error = message
        self.close(error=message)

    def _stop_after_error(self) -> None:
        message = self.error
        self._probe.close()
        self._closed = True
        if self.errors == "raise":
            raise OSError(f"nanscope: {message}")

    def _record(self, m: StepMeasures, samples: Optional[List[int]],
                batch: Any) -> Optional[Union[NonFiniteError, Stopped]]:
        """Records one step; returns the error to raise when the guard stopped the loop."""
        step = self._step
        self._step += 1
        bad, rows_note = bad_samples(m.passes, samples, self._batch_dim, self._time_first)
        origin = find_origin(step, self.layers, m.layers, m.calls, m.grad_events, m.input_health, m.loss_health,
                             self._previous_params_finite)
        overflow: List[int] = []
        decision = m.decision if m.decision is not None and not m.decision.updates else None
        skipped = self._optimizer is not None and (not m.optimizer_stepped or decision is not None)
        quarantined: List[int] = []
        if self._guard.active:  # under a guard the loader can leave the bad rows out (QuarantineSampler)
            quarantined = [i for i in dict.fromkeys(bad) if i not in self.quarantined]
            self.quarantined.update(quarantined)
        if skipped and m.loss_scaling:
            overflow = [i for i, lh in enumerate(m.layers) if lh.param_grads.has_nonfinite()]
        if origin.valid() and m.op_origin is not None:
            apply_op_origin(origin, m.op_origin, self.layers)
        if origin.valid():
            origin.explanation = explain(origin, m.input_health, bad, rows_note)
            if origin.phase == "update" and self._from_other_ranks == step - 1:
                origin.explanation = origin.explanation.rstrip(".") + (
                    " with gradients that the all-reduce brought from another rank (this rank's own were finite).")
        failed, born_in_layer = step_fate(origin.phase, origin.layer, origin.produced, m.loss_scaling, bool(overflow),
                                          m.loss_scale)
        params_finite = not any(lh.params.has_nonfinite() for lh in m.layers)
        self._previous_params_finite = params_finite
        why = None if not skipped else decision_message(decision) if decision is not None else \
            Message("scaler-skipped-update" if m.loss_scaling else "update-not-called")
        rolled_back = decision is not None and decision.action == "rollback"
        row = {
            "step": step, "loss": m.loss, "grad_norm": m.grad_norm, "grad_norm_clipped": m.grad_norm_clipped,
            "lr": m.learning_rate, "loss_scale": m.loss_scale, "skipped": int(skipped), "rolled_back": int(rolled_back),
            "why": why.text() if why else None, "step_ms": m.step_ms,
            "origin_phase": origin.phase or None,
            "origin_layer": origin.layer if origin.valid() and origin.layer >= 0 else None,
            "origin_op": origin.op or None, "origin_source": origin.source or None,
            "origin_produced": int(origin.produced) if origin.valid() else None,
            "origin_explanation": origin.explanation or None,
            "origin_call": origin.call if origin.valid() and origin.calls > 1 else None,
            "origin_calls": origin.calls if origin.valid() and origin.calls > 1 else None,
            **health_columns("input", m.input_health), **health_columns("loss", m.loss_health),
            "bad_samples": index_list(bad), "quarantined": index_list(quarantined), "zeroed_gradients": 0,
            "overflow_layers": index_list(overflow), "precision": m.precision,
            "layer_detail": None,  # the keeper's to say
        }
        row = fmt.keyed(fmt.STEP_COLUMNS, row, "steps row")
        assert self._keeper is not None
        facts = StepFacts(step=step, series=[row[name] for name in fmt.CHUNK_SERIES[:-1]], loss_scale=m.loss_scale,
                          skipped=skipped, step_ms=m.step_ms, nonfinite=origin.valid(), failed=failed,
                          born_in_layer=born_in_layer, scaler_skipped=bool(overflow))
        holds_nonfinite = origin.valid() or bool(overflow) or m.input_health.has_nonfinite() or \
            m.loss_health.has_nonfinite() or (not m.all_finite and any(
                getattr(lh, kind).has_nonfinite() for lh in m.layers for kind in fmt.HEALTH_KINDS))
        self._keeper.step(row, facts, m.layers, holds_nonfinite)
        first = self._tally.add(origin, failed, skipped, bool(overflow), m.step_ms, m.layers, quarantined,
                                rolled_back)
        self._tally.last(m.learning_rate, m.loss_scale, params_finite, m.precision)
        if first:
            self._events.add("first-nonfinite", step, origin.layer, origin.explanation, origin)
        if self._capsules is not None:
            self._keep_capsule(step, m, samples, batch, first, decision is not None)
        if why is not None:
            self._events.add("rollback" if rolled_back else "recovery", step, origin.layer if decision else -1, why)
        if quarantined:
            self._events.add("recovery", step, -1, Message("quarantined", [" ".join(str(i) for i in quarantined)]))
        for why_not in m.unmeasured:
            if why_not not in self._unmeasured_said:
                self._unmeasured_said.add(why_not)
                self._events.add("warning", step, -1, Message("not-measured-layout", [why_not]))
        if m.nonfinite_from_other_ranks and self._from_other_ranks is None:
            self._from_other_ranks = step
            self._events.add("warning", step, -1, Message("rank-nonfinite-from-other"))
        for layer, said in self._forecasts.add(step, m.layers, m.loss, m.loss_health, m.precision, m.learning_rate,
                                               m.loss_scaling, m.loss_scale, failed):
            self._events.add("warning", step, layer, said)
        if decision is not None and decision.action == "stop":
            self._tally.stopped_by_policy = True
            asked = decision.paused.request if decision.paused is not None else ""
            return Stopped(f"nanscope: stopped at step {step} by {'request ' + asked if asked else 'pause_default'}: "
                           "the update of the paused step was not applied, and the run file is closed", step)
        if decision is not None and decision.action == "raise":
            self._tally.stopped_by_policy = True
            o = fmt.keyed(fmt.ORIGIN_KEYS, origin.json(), "origin") if origin.valid() else None
            reason = decision.why or "on_nonfinite='raise'"
            return NonFiniteError(f"nanscope: step {step}: the gradients were not finite, so the update was not "
                                  f"applied ({reason})" + (f": {origin.explanation}" if origin.valid() else ""),
                                  step, o)
        return None

    def _keep_capsule(self, step: int, m: StepMeasures, samples: Optional[List[int]], batch: Any, first: bool,
                      intervened: bool) -> None:
        assert self._capsules is not None and self._writer is not None
        try:
            capsule = self._capsules.end_step(step, m, batch, samples, m.clip, first, intervened)
            if capsule is None:
                return
            capsule.batch_dim, capsule.time_first = self._batch_dim, self._time_first
            row = capsule_row(capsule, self.path)
        except (OSError, RuntimeError, TypeError, ValueError, AttributeError) as e:  # the run goes on without it
            self._events.add("error", step, -1, f"no capsule of this step: {type(e).__name__}: {e}")
            return
        self._writer.write(INSERT_CAPSULE, [row])
        said = [str(step), capsule.reason, f"{capsule.state_bytes / 1024:.1f}"]
        self._events.add("info", step, -1, Message("capsule-beside", said + [capsule.state_file])
                         if capsule.state_file else
                         Message("capsule-with-snapshot", said + [str(capsule.ring_start)])
                         if capsule.ring_start is not None else Message("capsule", said))

    # -- the end ----------------------------------------------------------------------------------

    def summary(self) -> Dict[str, Any]:
        """The run's summary so far, with the keys and in the order run files and ``--json`` use."""
        if not self._closed:
            self._record_held()
        return self._tally.summary(self.name, self.layers, optimizer_label(self._optimizer))

    def flush(self) -> None:
        """Returns once every step recorded so far is committed to the file, with the chunk being
        filled: a reader (``nanscope FILE``, ``sqlite3``) sees all of them. The writer commits on its
        own every quarter second; this is for a script that reads its own file as it trains."""
        if self._closed or self._writer is None:
            return
        self._record_held()
        if self._keeper is not None:
            self._keeper.write_filling_chunk()
        self._writer.flush()

    def close(self, error: Optional[str] = None) -> None:
        """Writes the summary and ``finished``, commits, and removes every hook. Safe to call twice."""
        if self._closed:
            return
        if self._held is not None and self._writer is not None:
            try:
                self._record_held()
            except Exception as e:  # noqa: BLE001 - the file still closes, saying so
                error = error or f"the last step could not be recorded: {type(e).__name__}: {e}"
        self._closed = True
        self._probe.close()
        if self._steerer.requests is not None:  # the run is over: nothing reads requests
            self._steerer.requests.remove()
        if self._writer is None:
            return
        summary = self.summary()
        if error:
            summary["error"] = error
            self._events.add("error", max(self._step - 1, 0), -1, error)
        if self._keeper is not None:
            self._keeper.finish()
        created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        # The run's length is known now: the config says it, as a C++ run's does from the start.
        self._writer.write("UPDATE run SET config = json_set(config, '$.steps', ?), summary = ?, finished = ?",
                           [(self._tally.steps, json.dumps(summary), created)])
        self._writer.close()
        if self._writer.error and self.errors == "raise" and self.error is None:
            raise OSError(f"nanscope: {self._writer.error}")

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        # An exception in the loop still leaves a finished file that says why it ended.
        self.close(error=f"{kind.__name__}: {value}" if kind is not None else None)


def record(model: torch.nn.Module, path: Union[str, "os.PathLike[str]"], optimizer: Optimizers = None,
           scaler: Any = None, name: Optional[str] = None, errors: str = "raise", ops: bool = False,
           keep: Union[str, int] = "auto", batch_dim: Optional[int] = None, on_nonfinite: str = "record",
           overwrite: bool = False, steer: bool = True, pause_timeout: float = 300.0,
           pause_default: str = "skip", capsules: bool = True, capsule_at: Sequence[int] = ()) -> Recorder:
    """Starts recording ``model``'s training into the run file ``path``; see docs/python.md.

    Returns the recorder, also a context manager: closing it writes the summary. ``errors``:
    ``"raise"`` (the default) raises when the file cannot be written; ``"continue"`` warns once
    and lets the training go on unrecorded. ``ops=True`` checks every op and names the first
    that turned finite inputs into a non-finite value, with its line (slow: for hunting).
    ``keep``: what the file keeps of each layer's health, as ``nanscope run --keep``: ``"auto"``
    (every non-finite step and its lead-up in full, samples of the rest, within 1.5 GiB),
    ``"all"``, or a budget such as ``"2GiB"``. ``optimizer``: one optimizer or a list of them
    (the first one's learning rate is recorded). ``batch_dim``: the dimension of the model's
    input that holds the batch's rows, when it is not the first (see docs/python.md).
    ``on_nonfinite``: what a step whose gradients are not finite does to the update: ``"record"``
    (nothing), ``"skip"``, ``"rollback"`` or ``"raise"`` (see docs/python.md, "Guarding your loop").
    ``overwrite``: replace ``path`` even when it is not a run file (otherwise refused). ``steer``:
    read requests from ``nanscope steer`` and the window (``PATH.steer``); ``"pause"`` waits at
    most ``pause_timeout`` seconds for a decision, then takes ``pause_default``. ``capsules``:
    keep the first non-finite step (and the steps of ``capsule_at``) as a capsule that
    ``nanscope.replay`` computes again (see docs/python.md, "Replaying the failing step").
    """
    return Recorder(model, os.fspath(path), optimizer=optimizer, scaler=scaler, name=name, errors=errors, ops=ops,
                    keep=keep, batch_dim=batch_dim, on_nonfinite=on_nonfinite, overwrite=overwrite, steer=steer,
                    pause_timeout=pause_timeout, pause_default=pause_default, capsules=capsules,
                    capsule_at=capsule_at)
