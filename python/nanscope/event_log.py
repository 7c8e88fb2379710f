"""The run file's events, written as the C++ writer writes them: a message id and its arguments
for the window to translate, an origin where one belongs, and a control change's rows."""

from __future__ import annotations

import json
import sqlite3
from typing import Optional, Sequence, Tuple, Union

from . import format as fmt
from .layer_keeper import LayerKeeper
from .messages import Message
from .origin import Origin
from .writer import RunFileWriter

Change = Tuple[str, str, str]  # (control, old, new)


class EventLog:
    """Queues events on the run file's writer and tells the keeper (detail is kept around them)."""

    def __init__(self, writer: Optional[RunFileWriter] = None, keeper: Optional[LayerKeeper] = None) -> None:
        self._writer = writer
        self._keeper = keeper

    def add(self, kind: str, step: int, layer: int, said: Union[str, Message], origin: Optional[Origin] = None) -> None:
        """One event: ``said`` a message the window translates, or text of its own (an error's)."""
        assert kind in fmt.EVENT_KINDS, kind
        message = said if isinstance(said, Message) else None
        if self._writer is not None:
            self._writer.write("INSERT INTO events (step, kind, layer, text, origin, message) VALUES (?,?,?,?,?,?)",
                               [(step, kind, layer if layer >= 0 else None, message.text() if message else said,
                                 json.dumps(fmt.keyed(fmt.ORIGIN_KEYS, origin.json(), "origin")) if origin else None,
                                 message.json() if message else None)])
        if self._keeper is not None:
            self._keeper.event(kind, step)

    def steered(self, kind: str, step: int, said: Message, changes: Sequence[Change]) -> None:
        """An event of steering; a control change with its rows in ``control_changes``."""
        if not changes:
            self.add(kind, step, -1, said)
            return
        if self._writer is not None:
            def write(db: sqlite3.Connection) -> None:
                event = db.execute("INSERT INTO events (step, kind, layer, text, origin, message) "
                                   "VALUES (?,?,NULL,?,NULL,?)", (step, kind, said.text(), said.json())).lastrowid
                db.executemany("INSERT INTO control_changes (event, step, control, old, new) VALUES (?,?,?,?,?)",
                               [(event, step, control, old, new) for control, old, new in changes])
            self._writer.call(write)
        if self._keeper is not None:
            self._keeper.event(kind, step)
