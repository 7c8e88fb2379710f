#!/usr/bin/env python3
"""Fails when a folder of core/src or ui includes a folder above it, or a LibTorch-free room includes LibTorch.

The ui never includes nanscope/session.h either: app/ hands the window the run it trains.

The rooms of each tree, from the bottom up, are listed in TREES (docs/architecture.md says why each
sits where it does). A file may include its own room's headers and those of rooms below it; an
include of a room above is an upward include, and the folders would form a cycle again. The public
headers (core/include/nanscope/) belong to rooms too (PUBLIC_ROOMS: the room whose library
implements them), so `#include "nanscope/session.h"` in record/ is as upward as `"session/..."`,
a public header may include only those of its room and below, and the ui's LibTorch-free rooms
(run, models) may include only the public headers of LibTorch-free rooms.

Usage: check_include_order.py [REPOSITORY_ROOT]   (default: the folder above this script's)
       check_include_order.py --self-test         (the rules, tried on a made-up tree)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Optional

# Each tree's rooms, bottom to top, and those that must build without LibTorch.
CORE_ROOMS = ["contract", "rules", "record", "health", "model_api", "probe", "training", "model", "scenarios",
              "distributed", "capsule", "session", "replay", "bench"]
UI_ROOMS = ["run", "models", "widgets", "window"]
TREES = {
    "core/src": (CORE_ROOMS, {"contract", "rules", "record"}),
    "ui": (UI_ROOMS, set(UI_ROOMS)),  # Qt and LibTorch never meet in one translation unit
}
LIBTORCH_HEADERS = re.compile(r'#\s*include\s*[<"](torch|ATen|c10|caffe2)/')
LOCAL_INCLUDE = re.compile(r'#\s*include\s*"([a-z_]+)/[^"]+"')
PUBLIC_INCLUDE = re.compile(r'#\s*include\s*"nanscope/([a-z_]+\.h)"')
PUBLIC = "core/include/nanscope"
# Each public header's room: where the library that implements it (or, for a header of types and
# inline code only, the lowest room that uses it) lives. A new header must be placed here.
PUBLIC_ROOMS = {
    "contract": ["challenge.h", "capsule.h", "controls.h", "event_message.h", "health.h", "health_compare.h",
                 "health_kinds.h", "input_shape.h", "keep_policy.h",
                 "observer_list.h", "optimizer.h", "precision.h", "pushed_run_source.h", "records.h",
                 "run_config.h", "run_source.h", "scenario.h", "step_chunk.h", "step_tally.h", "version.h"],
    "rules": ["layer_detail_retention.h"],
    "record": ["capsule_file.h", "job_folder.h", "recorded_run.h", "run_diff.h", "run_file.h",
               "run_file_format.h", "run_json.h", "run_recorder.h", "run_threads.h", "steer_request.h",
               "synthetic_records.h"],
    "training": ["allocator.h"],
    "model": ["inspect.h", "non_finite_state.h"],
    "session": ["devices.h", "session.h"],
    "replay": ["replay.h"],
    "bench": ["bench.h"],
}
# The ui's rooms that must build without LibTorch's libraries: only these rooms' public headers.
UI_LIBTORCH_FREE = {"run", "models"}
# Public headers no room of the ui includes: the window never builds a training run itself, app/
# hands it one (RunSourceFactory, app/live_session.h).
UI_NEVER = {"session.h"}


def public_rooms(root: Path) -> tuple[dict[str, str], list[str]]:
    """Each public header's room, and a line for each header PUBLIC_ROOMS does not place (or
    places but is gone)."""
    room_of = {h: room for room, headers in PUBLIC_ROOMS.items() for h in headers}
    present = {p.name for p in (root / PUBLIC).glob("*.h")}
    found = [f"{root / PUBLIC / h}: a public header of no room (add it to PUBLIC_ROOMS)" for h in sorted(present - set(room_of))]
    found += [f"{root / PUBLIC / h}: in PUBLIC_ROOMS, but no such header" for h in sorted(set(room_of) - present)]
    return room_of, found


def public_problems(path: Path, room: str, rank: dict[str, int], room_of: dict[str, str],
                    allowed: Optional[set[str]] = None) -> list[str]:
    """The public headers ``path`` (of ``room``) includes from a room above it, or, with
    ``allowed``, from a room not in it."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        included = PUBLIC_INCLUDE.match(line.strip())
        if not included or included.group(1) not in room_of:
            continue
        other = room_of[included.group(1)]
        if allowed is not None and other not in allowed:
            found.append(f"{path}:{number}: {room}/ includes nanscope/{included.group(1)} of {other}/, a room "
                         f"with LibTorch ({room}/ builds without it)")
        elif allowed is None and rank[other] > rank[room]:
            found.append(f"{path}:{number}: {room}/ includes nanscope/{included.group(1)} of {other}/, a room above it")
    return found


def problems(src: Path, rooms: list[str], without_libtorch: set[str],
             room_of: Optional[dict[str, str]] = None) -> list[str]:
    """Every upward include and every LibTorch include of a LibTorch-free room, one line each."""
    found = []
    rank = {room: i for i, room in enumerate(rooms)}
    for folder in sorted(p.name for p in src.iterdir() if p.is_dir()):
        if folder not in rank:
            found.append(f"{src / folder}: a folder of no room (add it to TREES and docs/architecture.md)")
    for path in sorted(src.glob("*/*")):
        room = path.parent.name
        if room not in rank or path.suffix not in (".h", ".cpp"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path}:{number}"
            included = LOCAL_INCLUDE.match(line.strip())
            if included and included.group(1) in rank and rank[included.group(1)] > rank[room]:
                found.append(f"{where}: {room}/ includes {included.group(1)}/, a room above it")
            if room in without_libtorch and LIBTORCH_HEADERS.match(line.strip()):
                found.append(f"{where}: {room}/ includes LibTorch, which it must build without")
        if room_of is not None:
            found += public_problems(path, room, rank, room_of)
    return found


def check(root: Path) -> list[str]:
    """Every problem of the repository at ``root``."""
    room_of, found = public_rooms(root)
    core_rank = {room: i for i, room in enumerate(CORE_ROOMS)}
    found += problems(root / "core/src", CORE_ROOMS, TREES["core/src"][1], room_of)
    for header in sorted((root / PUBLIC).glob("*.h")):
        if header.name in room_of:
            found += public_problems(header, room_of[header.name], core_rank, room_of)
    found += problems(root / "ui", UI_ROOMS, TREES["ui"][1])
    free = TREES["core/src"][1]
    for room in sorted(UI_LIBTORCH_FREE):
        for path in sorted((root / "ui" / room).glob("*")):
            if path.suffix in (".h", ".cpp"):
                found += public_problems(path, room, core_rank, room_of, allowed=free)
    for path in sorted((root / "ui").glob("*/*")):
        if path.suffix in (".h", ".cpp"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                included = PUBLIC_INCLUDE.match(line.strip())
                if included and included.group(1) in UI_NEVER:
                    found.append(f"{path}:{number}: the ui includes nanscope/{included.group(1)}: it is handed its "
                                 "live run by app/ (RunSourceFactory), never builds one")
    return found


def self_test() -> int:
    """Each rule tried on a made-up tree holding one break of it, and on the same tree mended."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for room in CORE_ROOMS:
            (root / "core/src" / room).mkdir(parents=True)
        for room in UI_ROOMS:
            (root / "ui" / room).mkdir(parents=True)
        (root / PUBLIC).mkdir(parents=True)
        for header in [h for headers in PUBLIC_ROOMS.values() for h in headers]:
            (root / PUBLIC / header).write_text("#pragma once\n")
        breaks = {
            root / "core/src/record/a.cpp": '#include "nanscope/session.h"\n',
            root / "core/src/contract/b.cpp": '#include "training/x.h"\n',
            root / PUBLIC / "run_source.h": '#include "nanscope/run_file.h"\n',
            root / "ui/models/c.cpp": '#include "nanscope/replay.h"\n',
            root / PUBLIC / "new_thing.h": "#pragma once\n",
            root / "ui/window/f.cpp": '#include "nanscope/session.h"\n',
        }
        for path, text in breaks.items():
            path.write_text(text)
        found = check(root)
        expected = ["core/src/record/a.cpp:1: record/ includes nanscope/session.h of session/, a room above it",
                    "core/src/contract/b.cpp:1: contract/ includes training/, a room above it",
                    "nanscope/run_source.h:1: contract/ includes nanscope/run_file.h of record/, a room above it",
                    "ui/models/c.cpp:1: models/ includes nanscope/replay.h of replay/, a room with LibTorch",
                    "nanscope/new_thing.h: a public header of no room",
                    "ui/window/f.cpp:1: the ui includes nanscope/session.h"]
        missed = [e for e in expected if not any(e in line for line in found)]
        for path in breaks:
            path.unlink()
        (root / PUBLIC / "run_source.h").write_text('#include "nanscope/records.h"\n')
        (root / "core/src/replay/d.cpp").write_text('#include "nanscope/run_file.h"\n#include "session/y.h"\n')
        (root / "ui/run/e.cpp").write_text('#include "nanscope/run_file.h"\n')
        mended = check(root)
    for e in missed:
        print(f"self-test: not found: {e}")
    for line in mended:
        print(f"self-test: a mended tree still has: {line}")
    ok = not missed and not mended and len(found) == len(expected)
    print("self-test: every rule holds" if ok else f"self-test failed ({len(found)} found: {found})")
    return 0 if ok else 1


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    for tree in TREES:
        if not (root / tree).is_dir():
            print(f"{root / tree}: no such folder", file=sys.stderr)
            return 2
    found = check(root)
    for line in found:
        print(line)
    trees = " and ".join(TREES)
    print(f"{len(found)} problems in {trees} and {PUBLIC}" if found else
          f"the rooms of {trees} and the public headers include only rooms below them")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
