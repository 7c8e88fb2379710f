"""Event sentences as the C++ core says them: a message id, its arguments, and the English.

The ids and their English patterns come from ``format.json`` (written from the core's list in
``core/src/contract/event_messages.cpp``), so that a Python run's events carry the ids the window
translates, and the English the C++ writer would have written for them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import List

from . import format as fmt

_ARGUMENT = re.compile(r"%([1-9])")


@dataclass
class Message:
    """One event's sentence: its id in ``format.EVENT_MESSAGES`` and its arguments, as text."""

    id: str
    args: List[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.id not in fmt.EVENT_MESSAGES:
            raise KeyError(f"event message {self.id!r} is not in format.json: add it to the core's list first")
        self.args = [str(a) for a in self.args]

    def text(self) -> str:
        """The English sentence: the pattern with %N replaced by the N-th argument (composeEventText)."""
        def argument(m: "re.Match[str]") -> str:
            n = int(m.group(1)) - 1
            return self.args[n] if n < len(self.args) else ""
        return _ARGUMENT.sub(argument, fmt.EVENT_MESSAGES[self.id])

    def json(self) -> str:
        """``events.message`` as run files hold it: {"id": ..., "args": [...]}."""
        return json.dumps({"id": self.id, "args": self.args}, separators=(",", ":"))


def short_number(value: float, digits: int) -> str:
    """A number with ``digits`` significant digits, as a C++ stream writes it ("9.7", "1.6e+04")."""
    return f"{value:.{digits}g}"


def layer_name(path: str) -> str:
    """A layer as the core's sentences name it: its path, or "the model" for the root."""
    return path or "the model"
