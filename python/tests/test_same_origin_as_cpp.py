"""The Python recorder and `nanscope run --model` name the same origin: the same model, weights
and batch, trained one step both ways (the C++ side from the model scripted by the same PyTorch)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Tuple

import pytest
import torch
from torch import nn

import nanscope
from conftest import PYTHON_DIR, report, run_cli

sys.path.insert(0, str(PYTHON_DIR.parent / "tests"))
import python_fixtures as fixtures  # noqa: E402  (the C++ suites' models)


def cpp_origin(model: nn.Module, x: torch.Tensor, y: torch.Tensor, tmp_path: Path) -> dict:
    torch.jit.script(model).save(str(tmp_path / "model.pt"))
    torch.save(x, tmp_path / "x.pt")
    torch.save(y, tmp_path / "y.pt")
    done = run_cli("run", "--model", str(tmp_path / "model.pt"), "--inputs", str(tmp_path / "x.pt"), "--targets",
                   str(tmp_path / "y.pt"), "--loss", "mse", "--batch", str(len(x)), "--steps", "1", "--optimizer",
                   "sgd", "--lr", "0.01", "--json", check=False)
    summary = next(json.loads(line) for line in done.stdout.splitlines() if '"type":"summary"' in line)
    return summary["origin"]


class UnrolledCell(nn.Module):
    """One Linear called 60 times a forward (gain 6): float32 overflows in its 50th call."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.Linear(8, 8, bias=False)
        with torch.no_grad():
            self.cell.weight.copy_(torch.eye(8) * 6.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(60):
            x = self.cell(x)
        return x.sum(dim=1)


class SharedBlock(nn.Module):
    """One block on two finite inputs in a forward: the second call overflows inside the block."""

    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Linear(4, 4)
        with torch.no_grad():
            self.block.weight.fill_(10.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x) - self.block(x * 1e37)


class WhereSqrtCell(nn.Module):
    """``where(x < 0, -3x, sqrt(x)) * gain - 0.6``: finite forward everywhere, but for x < 0 its
    backward is NaN (the gradient of the branch ``where`` did not take, 0, over sqrt of x < 0)."""

    def __init__(self) -> None:
        super().__init__()
        self.gain = nn.Parameter(torch.ones(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(x < 0, -3.0 * x, torch.sqrt(x)) * self.gain - 0.6


class LoopedBackwardNan(nn.Module):
    """The cell six times from 2.5: 0.98, 0.39, 0.02, -0.44, 0.73, 0.25. Only the fifth call takes
    a negative input, so its backward makes the first NaN gradient (into the fourth's output)."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = WhereSqrtCell()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(6):
            x = self.cell(x)
        return x.sum(dim=1)


LOCAL = {"UnrolledCell": UnrolledCell, "SharedBlock": SharedBlock, "LoopedBackwardNan": LoopedBackwardNan}
CALLS = {"UnrolledCell": 60, "SharedBlock": 2, "LoopedBackwardNan": 6}


def first_bad_call(model: nn.Module, x: torch.Tensor) -> int:
    """The truth, by plain torch: the first call of the model's one child whose output is not
    finite; with a finite forward, the call whose backward made the first non-finite gradient:
    the gradients into the calls' outputs as backward hands them over, the first non-finite one
    into call j's, which call j + 1 took as its input."""
    calls: list = []
    grads: list = []
    child = next(model.children())

    def seen(m: nn.Module, i: object, out: torch.Tensor) -> None:
        calls.append(bool(torch.isfinite(out).all()))
        number = len(calls)
        out.register_hook(lambda g: grads.append((number, bool(torch.isfinite(g).all()))))

    handle = child.register_forward_hook(seen)
    out = model(x)
    handle.remove()
    if not all(calls):
        return calls.index(False) + 1
    out.sum().backward()
    model.zero_grad()
    return next(number for number, finite in grads if not finite) + 1


@pytest.mark.parametrize("name, shape", [
    ("RootForwardNan", (8, 4)),       # NaN born in the root's own forward (sqrt outside a child)
    ("RootBackwardNan", (8, 4)),      # a finite forward, an Inf gradient made in the root's backward
    ("LogModel", (8, 4)),             # NaN born in a child module (head: log(x - 10))
    ("MaskedAttentionModel", (8, 5, 8)),  # -Inf from masked_fill, NaN from softmax, in attn
    ("UnrolledCell", (4, 8)),         # a module called 60 times: Inf from its 50th call
    ("SharedBlock", (4, 4)),          # a module called twice: Inf from its second call
    ("LoopedBackwardNan", (4, 8)),    # a module called 6 times: a NaN gradient from its 5th call's backward
])
def test_the_same_phase_and_layer_as_nanscope_run(tmp_path: Path, name: str, shape: Tuple[int, ...]) -> None:
    torch.manual_seed(4)
    model = LOCAL[name]() if name in LOCAL else getattr(fixtures, name)()
    x = torch.randn(*shape).abs() + 0.5 if name in LOCAL else torch.randn(*shape)
    if name == "LoopedBackwardNan":
        x = torch.full(shape, 2.5) + torch.rand(*shape) * 0.01  # every row on the course its docstring gives
    bad_call = first_bad_call(model, x) if name in LOCAL else 0
    with torch.no_grad():
        y = torch.zeros_like(model(x))
    expected = cpp_origin(model, x, y, tmp_path)

    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    path = tmp_path / "python.nsrun"
    with nanscope.record(model, path, optimizer=optimizer) as rec:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        rec.step(loss)
    s = report(path)
    assert s["first_nonfinite_step"] == 0
    assert (s["origin"]["phase"], s["origin"]["layer"]) == (expected["phase"], expected["layer"])
    if name in LOCAL:  # the module's own call made it, named with the call on both sides
        phase = "backward" if name == "LoopedBackwardNan" else "forward"
        assert (expected["phase"], expected["layer"], expected["produced"]) == \
            (phase, "block" if name == "SharedBlock" else "cell", True)
        if name == "LoopedBackwardNan":
            assert bad_call == 5
        call = f"call {bad_call} of {CALLS[name]}"
        assert call in s["origin"]["explanation"], s["origin"]["explanation"]
        assert call in expected["explanation"], expected["explanation"]  # the C++ writer names it too
        assert (s["origin"]["call"], s["origin"]["calls"]) == (expected["call"], expected["calls"]) == \
            (bad_call, CALLS[name])


@pytest.mark.parametrize("name", ["LogModel", "RootForwardNan"])
def test_ops_name_the_same_op_and_line_as_nanscope_run(tmp_path: Path, name: str) -> None:
    # The C++ side's op tier names the op and the user's line from the scripted model's own code;
    # ops=True names them from the ops the Python loop ran.
    torch.manual_seed(4)
    model = getattr(fixtures, name)()
    x = torch.randn(8, 4)
    with torch.no_grad():
        y = torch.zeros_like(model(x))
    expected = cpp_origin(model, x, y, tmp_path)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    path = tmp_path / "ops.nsrun"
    with nanscope.record(model, path, optimizer=optimizer, ops=True) as rec:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        rec.step(loss)
    got = report(path)["origin"]
    assert {k: got[k] for k in ("phase", "layer", "op", "produced")} == \
        {k: expected[k] for k in ("phase", "layer", "op", "produced")}
    assert got["source"].split(":")[0] == "python_fixtures.py"
    assert got["source"] == expected["source"].rsplit("/", 1)[-1]
