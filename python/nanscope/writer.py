"""The run file, written on a background thread as the C++ recorder writes it.

Items queue up from the training loop; the writer thread commits them in one transaction every
250 ms, in WAL mode, and bumps the run's heartbeat about once a second even when no step comes,
so a window following the file tells a slow step from a dead process. A killed process loses at
most what was queued since the last commit. A write that fails stops writing and keeps the error;
the training goes on (the recorder decides what to tell the user).
"""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
import time
from typing import Any, Callable, List, Optional, Tuple

from . import format as fmt

Item = Tuple[str, Any]  # ("sql", (statement, rows)), ("call", fn(db)), ("flush", event) or ("close", None)

COMMIT_INTERVAL_S = 0.25
HEARTBEAT_INTERVAL_S = 1.0


class WriteError(RuntimeError):
    """The run file could not be written (a full disk, a vanished folder, ...)."""


def _header(path: str) -> Tuple[bool, int, int]:
    """(an SQLite file, its application id, its user version), from SQLite's 100-byte header."""
    with open(path, "rb") as f:
        head = f.read(100)
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        return False, 0, 0
    return True, int.from_bytes(head[68:72], "big"), int.from_bytes(head[60:64], "big")


def refuse_to_replace(path: str, overwrite: bool) -> None:
    """Raises ``FileExistsError`` when ``path`` exists and is neither empty nor a run file of this
    format or an older one: a typo in a path must not turn a script or a checkpoint into a run file.
    ``overwrite`` replaces anything (the C++ writers' ``--overwrite``)."""
    if overwrite or not os.path.exists(path):
        return
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a folder, not a run file")
    if os.path.getsize(path) == 0:
        return  # an empty file holds nothing to lose
    sqlite, app_id, version = _header(path)
    if not sqlite or app_id != fmt.APPLICATION_ID:
        raise FileExistsError(f"{path} exists and is not a NaNScope run file: not replaced "
                         "(to replace it on purpose: overwrite=True)")
    if version > fmt.FORMAT_VERSION:
        raise FileExistsError(f"{path} is a run file of a newer NaNScope (format {version}; this recorder writes "
                         f"{fmt.FORMAT_VERSION}): not replaced (to replace it on purpose: overwrite=True)")


JOURNALS = ("-wal", "-shm", "-journal")


def _remove(path: str, suffixes: Tuple[str, ...] = ("",) + JOURNALS) -> None:
    """Removes ``path`` + each suffix that is there (the file and its journals by default)."""
    for suffix in suffixes:
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass


def create_run_file(path: str) -> None:
    """A new, empty run file at ``path`` with the schema of format.json: written beside it and
    renamed over it, so that a failure halfway leaves the file that was there as it was."""
    fresh = path + ".new"
    _remove(fresh)
    try:
        db = sqlite3.connect(fresh, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode = WAL")  # kept in the header: the file opens in WAL mode
            db.execute(f"PRAGMA application_id = {fmt.APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {fmt.FORMAT_VERSION}")
            db.execute("BEGIN")
            for statement in fmt.SCHEMA:
                db.execute(statement)
            db.executemany("INSERT INTO float32_exponents (e, scale) VALUES (?, ?)",
                           [(int(e), scale) for e, scale in fmt.FLOAT32_EXPONENTS])
            db.execute("COMMIT")
        finally:
            db.close()
        os.replace(fresh, path)
    except BaseException:
        _remove(fresh)
        raise
    _remove(path, JOURNALS)  # the replaced file's: another database's


class RunFileWriter:
    """Writes queued rows into a run file on its own thread."""

    def __init__(self, path: str, on_error: Optional[Callable[[str], None]] = None) -> None:
        self.path = path
        self._queue: "queue.Queue[Item]" = queue.Queue()
        self._on_error = on_error
        self.error: Optional[str] = None
        self._closed = False
        # What the file holds, in bytes (its pages in use), as of the last commit: a budget's measure.
        self.used_bytes = 0
        self._thread = threading.Thread(target=self._loop, name="nanscope-writer", daemon=True)
        self._ready = threading.Event()
        self._open_error: Optional[BaseException] = None
        self._thread.start()
        self._ready.wait()
        if self._open_error is not None:
            raise WriteError(f"{path}: {self._open_error}") from self._open_error

    def write(self, sql: str, rows: List[tuple]) -> None:
        """Queues rows for one statement; nothing is written after an error or after close."""
        if not self._closed and self.error is None:
            self._queue.put(("sql", (sql, rows)))

    def call(self, fn: Callable[[sqlite3.Connection], None]) -> None:
        """Queues ``fn(connection)`` to run on the writer thread, in the transaction of its batch."""
        if not self._closed and self.error is None:
            self._queue.put(("call", fn))

    def flush(self) -> None:
        """Returns once everything queued so far is committed (or has failed)."""
        if self._closed or not self._thread.is_alive():
            return
        done = threading.Event()
        self._queue.put(("flush", done))
        done.wait()

    def close(self) -> None:
        """Commits what is queued, switches the file out of WAL and stops the thread."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        self._queue.put(("close", None))
        self._thread.join()

    def _loop(self) -> None:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=True)
            db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a killed process loses nothing committed
            db.execute("PRAGMA journal_size_limit = 67108864")  # a thinning pass's log is cut back after it
        except (sqlite3.Error, OSError) as e:
            self._open_error = e
            self._ready.set()
            return
        self._ready.set()
        last_beat = time.monotonic()
        closing = False
        while not closing:
            batch: List[Item] = []
            deadline = time.monotonic() + COMMIT_INTERVAL_S
            waiters: List[threading.Event] = []
            while True:
                timeout = deadline - time.monotonic()
                try:
                    item = self._queue.get(timeout=max(timeout, 0.0)) if timeout > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if item[0] == "flush":
                    waiters.append(item[1])
                    break
                if item[0] == "close":
                    closing = True
                    break
                batch.append(item)
            beat = time.monotonic() - last_beat >= HEARTBEAT_INTERVAL_S
            if self.error is None and (batch or beat):
                if beat:
                    last_beat = time.monotonic()
                self._commit(db, batch, beat)
            for w in waiters:
                w.set()
        if self.error is None:
            try:
                db.execute("PRAGMA journal_mode = DELETE")  # one self-contained file, as the C++ writer leaves it
            except sqlite3.Error:
                pass  # a reader still holds it: it stays in WAL, which every reader handles
        db.close()

    def _commit(self, db: sqlite3.Connection, batch: List[Item], beat: bool) -> None:
        try:
            db.execute("BEGIN")
            for kind, work in batch:
                if kind == "call":
                    work(db)
                else:
                    db.executemany(*work)
            if beat:
                db.execute("UPDATE run SET heartbeat = heartbeat + 1")
            db.execute("COMMIT")
            pages, free, size = (db.execute(f"PRAGMA {p}").fetchone()[0]
                                 for p in ("page_count", "freelist_count", "page_size"))
            self.used_bytes = (pages - free) * size
        except (sqlite3.Error, OSError) as e:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self.error = f"recording stopped: {self.path}: {e}"
            if self._on_error is not None:
                self._on_error(self.error)
