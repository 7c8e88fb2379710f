"""A step's rows into the run file under the keep policy: its own row, its chunk, its layers when kept.

The C++ ``RunWriter`` does the same: every step's row, every chunk's rows once the chunk is
complete (and the chunk being filled, with its steps so far, about once a commit, so that a reader
following the file finds the chunk of every step it reads), the layer rows the retention keeps (a
step, or a lead-up held back until a non-finite step arrives), and at each chunk's end, when the
file holds more than its budget, one thinning of the sampled steps (docs/run-file.md, "Layer
detail").
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any, Dict, List, Sequence, Tuple

from . import format as fmt
from .chunks import StepChunk, StepFacts
from .origin import LayerHealth
from .retention import Decision, KeepPolicy, Retention
from .rows import layer_rows
from .writer import COMMIT_INTERVAL_S, RunFileWriter

COARSE_CHUNK_CHUNKS: int = fmt.COARSE_CHUNK_CHUNKS


class LayerKeeper:
    """Writes steps, chunks and the kept layer rows of one run through ``writer``."""

    def __init__(self, writer: RunFileWriter, layer_count: int, policy: KeepPolicy) -> None:
        self._writer = writer
        self._layers = layer_count
        self.retention = Retention(policy)
        self._chunk = StepChunk(0, layer_count)
        self._coarse = StepChunk(0, layer_count)  # the complete chunks of the current coarse chunk
        self._next_partial = 0.0  # when the chunk being filled is written again (time.monotonic())

    def keep_json(self) -> Dict[str, Any]:
        """run.keep as it stands: the policy and the sampled steps' stride now."""
        return self.retention.policy.json(self.retention.sample_every)

    def step(self, row: Dict[str, Any], facts: StepFacts, layers: List[LayerHealth], holds_nonfinite: bool) -> None:
        """Writes the step's row (its ``layer_detail`` filled in) and what it decides of layer rows."""
        index = facts.step // fmt.CHUNK_STEPS
        if index != self._chunk.index:
            if self._chunk.steps:
                self._write_chunk()
                self._stay_within_budget()
            self._chunk = StepChunk(index, self._layers)
        self._chunk.add(facts, layers)
        decisions = self.retention.step(facts.step, layers, holds_nonfinite)
        row["layer_detail"] = decisions[-1].detail or None
        self._writer.write(f"INSERT INTO steps ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                           [tuple(row.values())])
        self._keep(decisions, written=facts.step)
        if time.monotonic() >= self._next_partial:
            self.write_filling_chunk()

    def event(self, kind: str, step: int) -> None:
        """An event written: a warning or a first non-finite step keeps its lead-up."""
        self._keep(self.retention.event(kind, step), written=-1)

    def write_filling_chunk(self) -> None:
        """The chunk being filled, with its steps so far (the next commit's): a follower reads a
        thinned step with its chunk's layers at once."""
        if self._chunk.steps:
            self._write_rows(self._chunk.rows())
        self._next_partial = time.monotonic() + COMMIT_INTERVAL_S

    def finish(self) -> None:
        """The last chunk and coarse chunk, however short."""
        if self._chunk.steps:
            self._write_chunk()
        if self._coarse.steps:
            self._write_rows(self._coarse.rows("coarse_"))

    def _keep(self, decisions: Sequence[Decision], written: int) -> None:
        for d in decisions:
            if d.detail == "none":
                continue
            if d.step != written:  # written before, without its layers or as a sample
                self._writer.write("UPDATE steps SET layer_detail = ? WHERE step = ?", [(d.detail or None, d.step)])
            if not d.relabel_only:
                for sql, rows in layer_rows(d.step, self._layers, d.layers):
                    self._writer.write(sql, rows)

    def _write_chunk(self) -> None:
        """The complete chunk's rows, and its fold into the coarse chunk, written once a chunk of
        the next coarse chunk is complete."""
        self._write_rows(self._chunk.rows())
        group = self._chunk.index // COARSE_CHUNK_CHUNKS
        if self._coarse.steps and self._coarse.index != group:
            self._write_rows(self._coarse.rows("coarse_"))
            self._coarse = StepChunk(group, self._layers)
        self._coarse.index = group
        self._coarse.fold(self._chunk)

    def _write_rows(self, statements: Sequence[Tuple[str, List[tuple]]]) -> None:
        for sql, rows in statements:
            self._writer.write(sql, rows)

    def _stay_within_budget(self) -> None:
        policy = self.retention.policy
        if policy.keep_all or self._writer.used_bytes <= policy.budget_bytes or not self.retention.thin():
            return
        every, layers, keep = self.retention.sample_every, self._layers, json.dumps(self.keep_json())

        def thin(db: sqlite3.Connection) -> None:
            steps = [s for (s,) in db.execute(
                "SELECT step FROM steps WHERE layer_detail = 'sample' AND step % ? != 0", (every,))]
            db.executemany("DELETE FROM layer_steps WHERE key BETWEEN ? AND ?",
                           [(s * layers, s * layers + layers - 1) for s in steps])
            db.executemany("UPDATE steps SET layer_detail = 'none' WHERE step = ?", [(s,) for s in steps])
            db.execute("UPDATE run SET keep = ?", (keep,))

        self._writer.call(thin)
