"""Steering a running loop from outside: requests that ``nanscope steer`` (or the window) appends
to ``RUN.nsrun.steer``, read by the loop once a step, checked whole, and acknowledged in the run
file as events (docs/run-file.md, "Steering a Python run").

The loop creates the request file when it starts, empty, with the run file's permissions, and
reads only a regular file it owns: whoever can write the run file can steer it. A request is one
JSON object on one line::

    {"format": 1, "run": RUN_ID, "id": "3f2a9c1e", "lr": 0.01, "clip": 1.0 | "off",
     "policy": "record" | "skip" | "rollback" | "raise" | "pause", "decide": "continue" | "skip" |
     "rollback" | "stop", "at_step": 120}

with any of lr, clip, policy and decide. ``at_step`` (``nanscope steer FOLDER``, a data-parallel
job) applies the change at that step exactly, on every rank, or refuses it on a rank that read it
too late. One that is malformed, out of range, for another run (a file replaced
since) or of a newer format is refused as a whole, with its reason recorded.
"""

from __future__ import annotations

import json
import math
import os
import stat
import time
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple, Union

from .guard import DECISIONS, POLICIES

REQUEST_FORMAT = 1
SUFFIX = ".steer"
POLL_INTERVAL_S = 0.25  # the loop looks at the request file at most this often
KEYS = ("format", "run", "id", "lr", "clip", "policy", "decide", "at_step")


@dataclass
class Request:
    """One steering request, checked: ``None`` fields are not asked for."""

    id: str
    lr: Optional[float] = None
    clip: Union[None, float, str] = None  # a norm, or "off"
    policy: Optional[str] = None
    decide: Optional[str] = None
    at_step: Optional[int] = None  # the step the change applies at (every rank of a job alike)


class Refused(ValueError):
    """A request that is not applied; the message says why, ``id`` which request (when known)."""

    def __init__(self, reason: str, request_id: str) -> None:
        super().__init__(reason)
        self.id = request_id


def parse(line: str, run_id: str) -> Request:
    """One line of the request file as a request, or ``Refused`` naming what is wrong with it."""
    try:
        value = json.loads(line)
    except ValueError as e:
        raise Refused(f"not JSON ({e})", "?") from None
    if not isinstance(value, dict):
        raise Refused("not a JSON object", "?")
    request_id = value.get("id")
    if not isinstance(request_id, str) or not request_id:
        raise Refused("no request id", "?")
    fmt = value.get("format")
    if not isinstance(fmt, int) or isinstance(fmt, bool):
        raise Refused("no request format", request_id)
    if fmt > REQUEST_FORMAT:
        raise Refused(f"a request of a newer NaNScope (format {fmt}; this recorder reads {REQUEST_FORMAT})", request_id)
    if value.get("run") != run_id:
        raise Refused("for another run (the run file was replaced since)", request_id)
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        raise Refused(f"unknown field(s) {', '.join(unknown)}", request_id)
    request = Request(id=request_id)
    if "lr" in value:
        request.lr = _positive(value["lr"], "lr", request_id)
    if "clip" in value:
        request.clip = "off" if value["clip"] == "off" else _positive(value["clip"], "clip", request_id)
    if "policy" in value:
        request.policy = _one_of(value["policy"], POLICIES, "policy", request_id)
    if "decide" in value:
        request.decide = _one_of(value["decide"], DECISIONS, "decide", request_id)
    if "at_step" in value:
        at = value["at_step"]
        if isinstance(at, bool) or not isinstance(at, int) or at < 0:
            raise Refused(f"at_step must be a step (0, 1, ...), not {json.dumps(at)}", request_id)
        request.at_step = at
    if request.lr is None and request.clip is None and request.policy is None and request.decide is None:
        raise Refused("nothing asked (lr, clip, policy or decide)", request_id)
    return request


def _positive(value: Any, name: str, request_id: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise Refused(f"{name} must be a finite number above 0, not {json.dumps(value)}", request_id)
    return float(value)


def _one_of(value: Any, allowed: Tuple[str, ...], name: str, request_id: str) -> str:
    if value not in allowed:
        raise Refused(f"{name} must be one of {', '.join(allowed)}, not {json.dumps(value)}", request_id)
    return str(value)


class RequestFile:
    """The loop's side of ``RUN.nsrun.steer``: created empty when the run starts, read as it grows."""

    def __init__(self, run_path: str, run_id: str) -> None:
        self.path = run_path + SUFFIX
        self.run_id = run_id
        self._offset = 0
        self._partial = b""
        self._next_look = 0.0
        mode = stat.S_IMODE(os.stat(run_path).st_mode) & 0o666
        try:
            os.remove(self.path)  # a previous run's requests are not this run's
        except FileNotFoundError:
            pass
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        os.close(fd)
        self._uid = os.getuid() if hasattr(os, "getuid") else None

    def poll(self, now: bool = False) -> List[Union[Request, Refused]]:
        """The requests appended since the last look (at most every POLL_INTERVAL_S, or ``now``),
        each parsed or refused; nothing when the file is gone or is not the loop's own."""
        clock = time.monotonic()
        if not now and clock < self._next_look:
            return []
        self._next_look = clock + POLL_INTERVAL_S
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return []
        if not stat.S_ISREG(st.st_mode) or (self._uid is not None and st.st_uid != self._uid) \
                or st.st_size <= self._offset:
            return []
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            data = f.read(st.st_size - self._offset)
        self._offset += len(data)
        data = self._partial + data
        *lines, self._partial = data.split(b"\n")  # a line still being written waits for its end
        found: List[Union[Request, Refused]] = []
        for line in lines:
            if line.strip():
                try:
                    found.append(parse(line.decode("utf-8", errors="replace"), self.run_id))
                except Refused as refused:
                    found.append(refused)
        return found

    def remove(self) -> None:
        """The run is over: no request can reach it any more."""
        try:
            os.remove(self.path)
        except OSError:
            pass

