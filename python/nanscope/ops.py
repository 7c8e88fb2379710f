"""Op-level origins (``nanscope.record(..., ops=True)``): every op of the step is checked, and the
first that turned finite inputs into a non-finite output is named with its module and the line of
the user's own Python source that called it.

A ``TorchDispatchMode`` sees every aten op, in forward and in backward, on PyTorch 1.13 and 2.x.
Checking reads each op's inputs and outputs on the host: it is slow (see docs/python.md) and meant
for hunting, not for every run.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

_TORCH_DIR = os.path.dirname(torch.__file__)
_OWN_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclass
class OpOrigin:
    op: str  # "aten::log"
    module: int  # the innermost module whose forward was running; -1: none (the loss, backward)
    source: str  # "train.py:41": the user's line that called it; "" in backward
    backward: bool


def _floats(value: Any) -> List[torch.Tensor]:
    return [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())]


def _finite(tensors: List[torch.Tensor]) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in tensors if t.numel() > 0)


def _user_frame() -> tuple:
    """(the user's innermost "file:line", whether autograd's backward is on the stack)."""
    frame = sys._getframe(2)
    source = ""
    backward = False
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(_TORCH_DIR):
            if os.path.join("autograd", "__init__.py") in path and frame.f_code.co_name in ("backward", "grad"):
                backward = True
        elif not path.startswith(_OWN_DIR) and not source:
            source = f"{os.path.basename(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return source, backward


def _called_by_nanscope() -> bool:
    """The recorder's own measuring (a norm that overflows float32, say) is not the user's op."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_TORCH_DIR):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(_OWN_DIR)


class OpChecker(TorchDispatchMode):
    """Finds the first op of a step that made a non-finite value from finite inputs."""

    def __init__(self, current_module: Callable[[], int]) -> None:
        super().__init__()
        self.current_module = current_module
        self.first: Optional[OpOrigin] = None

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: Optional[dict] = None) -> Any:
        kwargs = kwargs or {}
        inputs_finite = self.first is None and _finite(_floats((args, kwargs)))  # before an in-place op
        out = func(*args, **kwargs)
        if inputs_finite and not _finite(_floats(out)) and not _called_by_nanscope():
            source, backward = _user_frame()
            name = str(func.overloadpacket).replace("aten.", "aten::", 1)
            self.first = OpOrigin(op=name, module=-1 if backward else self.current_module(),
                                  source="" if backward else source, backward=backward)
        return out
