"""The run file's header for a Python loop: its ``run`` row (who recorded what, with which
settings) and its ``layers``, as the C++ recorder writes them for its own runs."""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import torch

from . import __version__
from . import format as fmt
from .origin import Layer
from .run_config import optimizer_settings, parallel_from_environment
from .writer import RunFileWriter


@dataclass
class RunHeader:
    """What the run row says of the loop and the recorder's settings."""

    name: str
    script: str
    model: torch.nn.Module
    optimizer: Optional[torch.optim.Optimizer]
    optimizers: Sequence[torch.optim.Optimizer]
    scaler: Any
    ops: bool
    batch_dim: Optional[int]
    policy: str  # on_nonfinite
    max_rollbacks: int
    run_id: str
    steerable: bool
    learning_rate: float
    keep: Dict[str, Any]
    not_measured: List[Dict[str, str]] = field(default_factory=list)


def instrumentation(ops: bool, batch_dim: Optional[int]) -> Dict[str, Any]:
    """What a step's numbers mean: what is measured every step, what only on some."""
    return {
        "every_step": ["input", "module calls' outputs", "gradients into module outputs",
                       "parameters", "parameter gradients", "loss", "update ratio"],
        "exact_counts": "on tensors holding NaN or Inf (others: min, max and norm)",
        "ops": ops,
        "batch_dim": batch_dim,
    }


def write_run_header(writer: RunFileWriter, h: RunHeader, layers: Sequence[Layer]) -> str:
    """Queues the run row and the layers; returns the device the model trains on."""
    first = next(h.model.parameters())
    device = first.device.type
    rank = os.environ.get("RANK")
    world = os.environ.get("WORLD_SIZE")
    controls: Dict[str, Any] = {"learning_rate": fmt.number_json(h.learning_rate), "precision": "fp32"}
    # The guard as the window's controls say it (steer_request.h's nonFinitePolicyFor, inverted):
    # skipping the batch, rolling back, pausing on a non-finite step.
    if h.policy in ("skip", "rollback", "pause"):
        controls["recovery"] = {"quarantine_samples": h.policy == "skip", "zero_nonfinite_grads": False,
                                "rollback_on_nonfinite_loss": h.policy == "rollback", "max_retries": h.max_rollbacks}
    if h.policy == "pause":
        controls["pause_on_nonfinite"] = True
    config = {
        "recorder": {
            "kind": "python",
            "nanscope_python": __version__,
            "name": h.name,
            "script": h.script or None,
            "argv": list(sys.argv),
            "host": platform.node(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "dtype": str(first.dtype).replace("torch.", ""),
            "model_class": type(h.model).__name__,
            "parameters": sum(p.numel() for p in h.model.parameters()),
            "modules": len(layers),
            "optimizer_class": type(h.optimizer).__name__ if h.optimizer is not None else None,
            "optimizer_settings": optimizer_settings(h.optimizer),
            "scaler": type(h.scaler).__name__ if h.scaler is not None else None,
            "optimizers": [type(o).__name__ for o in h.optimizers],
            "instrumentation": instrumentation(h.ops, h.batch_dim),
            "on_nonfinite": h.policy,
            "run_id": h.run_id,
            "steerable": h.steerable,
            "not_measured": h.not_measured,
        },
        "steps": 0,
        "seed": torch.initial_seed(),
        # The intra-op threads: a CPU reduction's order, and so its last bits, follow them.
        "threads": torch.get_num_threads(),
        "parallel": parallel_from_environment(),
        "device": device,
        "controls": controls,
    }
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    in_job = rank is not None and world is not None
    writer.write(
        "INSERT INTO run (format_version, nanscope_version, libtorch_version, created, scenario, model_path, "
        "model_sha256, device, precision, seed, config, controls, rank, world_size, keep) "
        "VALUES (?,?,?,?,NULL,NULL,NULL,?,?,?,?,?,?,?,?)",
        [(fmt.FORMAT_VERSION, __version__, torch.__version__, created, device, "fp32",
          torch.initial_seed() & 0x7FFFFFFFFFFFFFFF, json.dumps(config), json.dumps(controls),
          int(rank) if in_job else None, int(world) if in_job else None, json.dumps(h.keep))])
    writer.write("INSERT INTO layers (id, path, type, parent) VALUES (?,?,?,?)",
                 [(l.id, l.path, l.type, l.parent if l.parent >= 0 else None) for l in layers])
    return device
