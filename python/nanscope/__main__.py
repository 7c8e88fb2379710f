"""``python -m nanscope replay FILE --script train.py``: ``nanscope.replay`` without writing the
five lines, for a training script that defines a function building the model (and optimizer) and
the step's ``compute_loss``. The script is loaded as a module (its ``if __name__ == "__main__"``
block does not run), so it must not start training at import."""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
from typing import Any, Dict, List, Optional, Tuple

import torch

from .capsule import CapsuleError
from .replay import replay
from .replay_step import ReplayError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m nanscope", description="NaNScope's Python side.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("replay", help="compute a recorded loop's failing step again from its capsule",
                       description="Computes the capsule of a run recorded by nanscope.record again with the "
                       "script's own model code, and adds the results to the run file.")
    r.add_argument("file", help="the run file (.nsrun)")
    r.add_argument("--script", required=True, help="the training script defining the functions below")
    r.add_argument("--model", default="build_model", metavar="FUNCTION",
                   help="builds the model: returns the model, or (model, optimizer) (default: build_model)")
    r.add_argument("--optimizer", metavar="FUNCTION",
                   help="builds the optimizer from the model, when --model returns the model alone")
    r.add_argument("--compute-loss", default="compute_loss", metavar="FUNCTION",
                   help="compute_loss(model, batch): the step's forward and loss (default: compute_loss)")
    r.add_argument("--step", type=int, help="the capsule's step (default: the first non-finite step's)")
    r.add_argument("--clip", type=float, help="the loop's own gradient clipping (max norm)")
    r.add_argument("--what-if", action="append", default=[], metavar="CHANGE",
                   help="a change of your own: lr=1e-4, clip=0.5, fp32, without=13,14 (repeatable: one change)")
    r.add_argument("--no-samples", action="store_true", help="do not bisect the batch")
    r.add_argument("--no-write", action="store_true", help="leave the run file as it is")
    r.add_argument("--json", action="store_true", help="print the results as one JSON line")
    return p


def _function(names: Dict[str, Any], name: str, script: str) -> Any:
    f = names.get(name)
    if not callable(f):
        raise ReplayError(f"{script} defines no function {name}()")
    return f


def _what_if(changes: List[str]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for change in changes:
        key, _, value = change.partition("=")
        if key == "fp32" and not value:
            out["fp32"] = True
        elif key in ("lr", "clip") and value:
            out[key] = float(value)
        elif key == "without" and value:
            out["without"] = [int(v) for v in value.split(",")]
        else:
            raise ReplayError(f"--what-if {change}: expected lr=RATE, clip=NORM, fp32 or without=I,J")
    return out


def _build(names: Dict[str, Any], args: argparse.Namespace) -> Tuple[torch.nn.Module, Optional[Any]]:
    built = _function(names, args.model, args.script)()
    model, optimizer = built if isinstance(built, tuple) else (built, None)
    if args.optimizer:
        optimizer = _function(names, args.optimizer, args.script)(model)
    if not isinstance(model, torch.nn.Module):
        raise ReplayError(f"{args.model}() returned a {type(model).__name__}, not a torch.nn.Module")
    return model, optimizer


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
        names = runpy.run_path(args.script, run_name="__nanscope_replay__")
        model, optimizer = _build(names, args)
        result = replay(args.file, model, optimizer, _function(names, args.compute_loss, args.script),
                        step=args.step, what_if=_what_if(args.what_if), samples=not args.no_samples,
                        clip=args.clip, write=not args.no_write,
                        progress=None if args.json else lambda what: print(f"{what}...", file=sys.stderr))
    except (CapsuleError, ReplayError, OSError) as e:
        print(f"nanscope replay: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result.json()) if args.json else result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
