#!/usr/bin/env python3
"""Fails when a folder of core/src or ui includes a folder above it, or a LibTorch-free room includes LibTorch.

The rooms of each tree, from the bottom up, are listed in TREES (docs/architecture.md says why each
sits where it does). A file may include its own room's headers and those of rooms below it; an
include of a room above is an upward include, and the folders would form a cycle again.

Usage: check_include_order.py [REPOSITORY_ROOT]   (default: the folder above this script's)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

# Each tree's rooms, bottom to top, and those that must build without LibTorch.
CORE_ROOMS = ["contract", "record", "health", "model_api", "probe", "training", "model", "scenarios",
              "distributed", "capsule", "session", "replay", "bench"]
UI_ROOMS = ["run", "models", "widgets", "window"]
TREES = {
    "core/src": (CORE_ROOMS, {"contract", "record"}),
    "ui": (UI_ROOMS, set(UI_ROOMS)),  # Qt and LibTorch never meet in one translation unit
}
LIBTORCH_HEADERS = re.compile(r'#\s*include\s*[<"](torch|ATen|c10|caffe2)/')
LOCAL_INCLUDE = re.compile(r'#\s*include\s*"([a-z_]+)/[^"]+"')


def problems(src: Path, rooms: list[str], without_libtorch: set[str]) -> list[str]:
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
    return found


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    found = []
    for tree, (rooms, without_libtorch) in TREES.items():
        src = root / tree
        if not src.is_dir():
            print(f"{src}: no such folder", file=sys.stderr)
            return 2
        found += problems(src, rooms, without_libtorch)
    for line in found:
        print(line)
    trees = " and ".join(TREES)
    print(f"{len(found)} problems in {trees}" if found else f"the rooms of {trees} include only rooms below them")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
