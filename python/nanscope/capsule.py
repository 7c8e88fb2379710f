"""A Python run's capsule: what it takes to compute one step of the user's loop again, and where it
lives in the run file.

The recorder keeps one of the first non-finite step (and of the steps named by ``capsule_at``) in
the ``capsules`` table the C++ capsules use: ``meta`` is JSON (``writer`` ``"python"``), ``state``
the bytes ``torch.save`` writes of the tensors and the JSON of their nesting (``tensor_tree.pack``:
read back with ``weights_only=True``, no pickled object). A state larger
than ``IN_FILE_LIMIT`` is written beside the run file (``RUN.nsrun.capsule-STEP``) and named in
``meta``. ``nanscope.replay`` adds its results to ``meta`` (``replay``), so ``nanscope replay
FILE`` prints them. See docs/run-file.md, "Capsules of a Python run".
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from . import format as fmt
from .tensor_tree import pack, unpack

CAPSULE_FORMAT = 1  # of a Python capsule's meta and state; a newer one is refused
IN_FILE_LIMIT = 256 * 2**20  # a larger state is written beside the run file


class CapsuleError(RuntimeError):
    """A capsule that cannot be read or replayed here: the message says why."""


@dataclass
class RingStep:
    """One step of the capsule's ring, as the loop ran it: its batch, the generators' states as it
    began, and the controls it ran with."""

    step: int
    batch: Any
    rng: Dict[str, Any]
    lrs: List[List[float]]  # each optimizer's groups' learning rates
    clip: Optional[float] = None  # the recorder's (steered) clipping
    loss_scale: float = 1.0
    samples: Optional[List[int]] = None

    def meta(self) -> Dict[str, Any]:
        return {"step": self.step, "lrs": self.lrs, "clip": self.clip, "loss_scale": fmt.number_json(self.loss_scale),
                "samples": self.samples}


@dataclass
class Capsule:
    """A step to compute again: the state it began with, its batch, and the ring before it."""

    step: int
    reason: str  # "first-non-finite" or "asked"
    failing: RingStep  # the step itself
    params: Dict[str, torch.Tensor]  # as the step began (not yet updated)
    buffers: Dict[str, torch.Tensor]  # as the step found them (before its forward changed them)
    loss: float  # the recorded loss
    batch_given: bool = True  # False: ``batch`` is the positional inputs of the model's first forward
    autocast: Optional[Tuple[str, str]] = None  # (device type, dtype) the forward ran under
    loss_scaling: bool = False
    batch_dim: Optional[int] = None
    time_first: bool = False
    device: str = "cpu"
    threads: int = 1
    precision: str = "fp32"
    torch_version: str = torch.__version__
    optimizers: List[str] = field(default_factory=list)
    # The ring: the state of its first step (checked finite) and the steps from there up to, not
    # including, the capsule's; None when the recorder kept none.
    ring_start: Optional[int] = None
    ring_params: Dict[str, torch.Tensor] = field(default_factory=dict)
    ring_buffers: Dict[str, torch.Tensor] = field(default_factory=dict)
    ring_optimizers: List[Dict[str, Any]] = field(default_factory=list)
    ring: List[RingStep] = field(default_factory=list)
    replay: Optional[Dict[str, Any]] = None  # the results nanscope.replay wrote
    state_file: Optional[str] = None  # the file beside the run file holding the state, if any
    state_bytes: int = 0

    def meta(self) -> Dict[str, Any]:
        return {
            "format": CAPSULE_FORMAT, "writer": "python", "step": self.step, "reason": self.reason,
            "torch_version": self.torch_version, "device": self.device, "threads": self.threads,
            "precision": self.precision, "autocast": list(self.autocast) if self.autocast else None,
            "loss": fmt.number_json(self.loss), "loss_scaling": self.loss_scaling, "batch_given": self.batch_given,
            "batch_dim": self.batch_dim, "time_first": self.time_first, "optimizers": self.optimizers,
            "parameters": [[n, list(t.shape), str(t.dtype).replace("torch.", "")] for n, t in self.params.items()],
            "buffers": [[n, list(t.shape), str(t.dtype).replace("torch.", "")] for n, t in self.buffers.items()],
            "failing": self.failing.meta(),
            "ring": None if self.ring_start is None else {
                "step": self.ring_start, "steps": [s.meta() for s in self.ring]},
            "state_bytes": self.state_bytes, "state_file": self.state_file, "replay": self.replay,
        }


def encode_state(c: Capsule) -> bytes:
    """The capsule's tensors as ``torch.save`` writes them (all on the host)."""
    state = {"params": c.params, "buffers": c.buffers, "rng": c.failing.rng, "batch": c.failing.batch,
             "ring": {"params": c.ring_params, "buffers": c.ring_buffers, "optimizers": c.ring_optimizers,
                      "steps": [{"batch": s.batch, "rng": s.rng} for s in c.ring]}}
    skeleton, tensors = pack(state)
    out = io.BytesIO()
    torch.save({"skeleton": skeleton, "tensors": tensors}, out)
    return out.getvalue()


def capsule_row(c: Capsule, run_path: str) -> Tuple[Any, ...]:
    """The ``capsules`` row of ``c``; a state over ``IN_FILE_LIMIT`` goes to a file beside the run
    file (written whole, then renamed), the row naming it (its ``bytes`` count the state wherever
    it is)."""
    state = encode_state(c)
    c.state_bytes = len(state)
    if len(state) > IN_FILE_LIMIT:
        beside = f"{run_path}.capsule-{c.step}"
        with open(beside + ".new", "wb") as f:
            f.write(state)
        os.replace(beside + ".new", beside)
        c.state_file, state = os.path.basename(beside), b""
    meta = json.dumps(c.meta())
    return (c.step, c.reason, c.ring_start, len(meta) + c.state_bytes, meta, state, None)


INSERT = ("INSERT OR REPLACE INTO capsules (step, reason, snapshot_step, bytes, meta, state, model_sha256) "
          "VALUES (?, ?, ?, ?, ?, ?, ?)")


# -- reading --------------------------------------------------------------------------------------

def _open(path: str) -> sqlite3.Connection:
    if not os.path.isfile(path):
        raise CapsuleError(f"{path}: no such run file")
    try:
        db = sqlite3.connect(path, timeout=10.0)
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
    except sqlite3.DatabaseError as e:
        raise CapsuleError(f"{path} is not a NaNScope run file ({e})") from None
    if app_id != fmt.APPLICATION_ID:
        db.close()
        raise CapsuleError(f"{path} is not a NaNScope run file")
    return db


def capsule_steps(path: str) -> List[Tuple[int, str, Dict[str, Any]]]:
    """(step, reason, meta) of each committed capsule of ``path``, in step order."""
    db = _open(path)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "capsules" not in tables:
            return []
        return [(step, reason, json.loads(meta))
                for step, reason, meta in db.execute("SELECT step, reason, meta FROM capsules ORDER BY step")]
    finally:
        db.close()


def choose_step(path: str, asked: Optional[int]) -> int:
    """The step to replay: ``asked``, else the first non-finite step's capsule, else the first."""
    entries = capsule_steps(path)
    if not entries:
        raise CapsuleError(f"{path}: holds no capsule (the recorder keeps one of the first non-finite step, and of "
                           "the steps named by capsule_at=, when it is given the optimizer; capsules=False keeps "
                           "none)")
    steps = [s for s, _, _ in entries]
    if asked is not None:
        if asked not in steps:
            raise CapsuleError(f"{path}: holds no capsule of step {asked} (it holds: {', '.join(map(str, steps))})")
        return asked
    return next((s for s, reason, _ in entries if reason == "first-non-finite"), steps[0])


def _load(data: bytes, where: str) -> Dict[str, Any]:
    try:
        saved = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
        return unpack(saved["skeleton"], saved["tensors"])
    except Exception as e:  # noqa: BLE001 - a damaged or truncated state
        raise CapsuleError(f"{where}: the capsule's state cannot be read ({type(e).__name__}: "
                           f"{str(e).splitlines()[0] if str(e) else ''})") from None


def read_capsule(path: str, step: int) -> Capsule:
    """The capsule of ``step`` in ``path``, its tensors on the host."""
    db = _open(path)
    try:
        row = db.execute("SELECT meta, state FROM capsules WHERE step = ?", (step,)).fetchone()
    finally:
        db.close()
    if row is None:
        raise CapsuleError(f"{path}: holds no capsule of step {step}")
    meta = json.loads(row[0])
    if meta.get("writer") != "python":
        raise CapsuleError(f"{path}: the capsule of step {step} was kept by NaNScope's own training, not by "
                           f"nanscope.record: replay it with `nanscope replay {path}`")
    if int(meta.get("format", 0)) > CAPSULE_FORMAT:
        raise CapsuleError(f"{path}: the capsule of step {step} is of a newer format ({meta['format']}; this "
                           f"NaNScope reads {CAPSULE_FORMAT}): update NaNScope to replay it")
    data = row[1]
    if meta.get("state_file"):
        beside = os.path.join(os.path.dirname(os.path.abspath(path)), meta["state_file"])
        try:
            with open(beside, "rb") as f:
                data = f.read()
        except OSError as e:
            raise CapsuleError(f"{path}: the capsule of step {step} is kept beside the file, in {beside}, which "
                               f"cannot be read ({e.strerror}): it travels with the run file") from None
    return _capsule(meta, _load(data, f"{path}, step {step}"))


def _ring_step(meta: Dict[str, Any], state: Dict[str, Any]) -> RingStep:
    return RingStep(step=meta["step"], batch=state["batch"], rng=state["rng"], lrs=meta["lrs"], clip=meta["clip"],
                    loss_scale=float(meta["loss_scale"]), samples=meta["samples"])


def _capsule(meta: Dict[str, Any], state: Dict[str, Any]) -> Capsule:
    ring = meta.get("ring")
    steps = state["ring"]["steps"]
    return Capsule(
        step=meta["step"], reason=meta["reason"],
        failing=_ring_step(meta["failing"], {"batch": state["batch"], "rng": state["rng"]}),
        params=state["params"], buffers=state["buffers"], loss=float(meta["loss"]), batch_given=meta["batch_given"],
        autocast=tuple(meta["autocast"]) if meta["autocast"] else None,  # type: ignore[arg-type]
        loss_scaling=meta["loss_scaling"], batch_dim=meta["batch_dim"], time_first=meta["time_first"],
        device=meta["device"], threads=meta["threads"], precision=meta["precision"],
        torch_version=meta["torch_version"], optimizers=meta["optimizers"],
        ring_start=ring["step"] if ring else None, ring_params=state["ring"]["params"],
        ring_buffers=state["ring"]["buffers"], ring_optimizers=state["ring"]["optimizers"],
        ring=[_ring_step(m, s) for m, s in zip(ring["steps"], steps)] if ring else [],
        replay=meta.get("replay"), state_file=meta.get("state_file"), state_bytes=int(meta.get("state_bytes", 0)))


def write_results(path: str, step: int, results: Dict[str, Any]) -> None:
    """Adds a replay's results to the capsule's ``meta``; nothing else in the file changes."""
    db = _open(path)
    try:
        with db:
            db.execute("UPDATE capsules SET meta = json_set(meta, '$.replay', json(?)), "
                       "bytes = bytes - length(meta) + length(json_set(meta, '$.replay', json(?))) WHERE step = ?",
                       (json.dumps(results), json.dumps(results), step))
    except sqlite3.Error as e:
        raise CapsuleError(f"{path}: the replay's results could not be written ({e})") from None
    finally:
        db.close()
