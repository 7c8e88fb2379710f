"""Where a step's first non-finite value was born, by the C++ core's rules (core/src/rules/origin.cpp).

The rules read what the step measured, in this order: parameters already non-finite (made so by
the previous step's update, or before it); the input batch (every forward pass of the step); the
first module *call* whose output is non-finite from finite inputs (it *produced* the value; a
module called several times is named with the call); the loss; then backward, the first gradient
to go bad in the order backward ran, and the call whose backward made it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from .health import Health

if TYPE_CHECKING:
    from .ops import OpOrigin


@dataclass
class Layer:
    """A module as run files list it: ``named_modules()`` path (the root is ""), class, parent id."""

    id: int
    path: str
    type: str
    parent: int  # -1: the root


@dataclass
class LayerHealth:
    forward: Health = field(default_factory=Health)
    grad: Health = field(default_factory=Health)
    params: Health = field(default_factory=Health)
    param_grads: Health = field(default_factory=Health)
    input_finite: bool = True
    # |w after - w before| / |w before| of the update this step applied; NaN: none applied.
    update_ratio: float = float("nan")

    def nonfinite(self) -> bool:
        """The one definition of a non-finite layer in a step: its output or its gradient."""
        return self.forward.has_nonfinite() or self.grad.has_nonfinite()


@dataclass
class Origin:
    phase: str = ""  # "": the step was finite
    step: int = -1
    layer: int = -1
    layer_path: str = ""
    op: str = ""
    source: str = ""
    produced: bool = False
    chain: str = ""
    explanation: str = ""
    call: int = 0  # the module's call that made it, when the module ran more than once
    calls: int = 0

    def valid(self) -> bool:
        return self.phase != ""

    def json(self) -> Dict[str, object]:
        """The origin as run files and every ``--json`` output write it."""
        return {
            "step": self.step,
            "phase": self.phase,
            "layer": self.layer_path if self.layer >= 0 else None,
            "layer_id": self.layer if self.layer >= 0 else None,
            "op": self.op or None,
            "source": self.source or None,
            "produced": self.produced,
            "chain": self.chain or None,
            "explanation": self.explanation,
            "call": self.call if self.calls > 1 else None,
            "calls": self.calls if self.calls > 1 else None,
        }


def _at(step: int, layers: Sequence[Layer], phase: str, layer: int, produced: bool) -> Origin:
    return Origin(phase=phase, step=step, layer=layer, layer_path=layers[layer].path if layer >= 0 else "",
                  produced=produced)


def _ancestors(layers: Sequence[Layer], index: int) -> List[int]:
    out = []
    while layers[index].parent >= 0:
        index = layers[index].parent
        out.append(index)
    return out


@dataclass
class Call:
    """One call of a module in a step, in the order calls ended (a module's call ends after the
    calls it made): its module, whether its floating inputs were finite, whether its output was."""

    module: int
    inputs_finite: bool
    output_nonfinite: bool
    number: int = 1  # 1-based among its module's calls this step
    of: int = 1  # its module's calls this step
    # Whether every gradient that reached its outputs was finite (None: none reached them).
    output_grads_finite: Optional[bool] = None


@dataclass
class GradEvent:
    """A gradient reaching a tensor that module calls made or took, in the order backward ran."""

    nonfinite: bool
    producers: List[int]  # the calls the tensor is an output of, innermost first
    consumers: List[int]  # the calls the tensor is an input of


def _with_call(o: Origin, call: Call) -> Origin:
    o.call, o.calls = call.number, call.of
    return o


def _enclosing(calls: Sequence[Call], layers: Sequence[Layer], inner: int) -> List[int]:
    """The calls of the inner call's ancestors that enclose it, innermost first: an ancestor's
    first call to end after it."""
    out = []
    for a in _ancestors(layers, calls[inner].module):
        found = next((k for k in range(inner + 1, len(calls)) if calls[k].module == a), -1)
        if found >= 0:
            out.append(found)
    return out


def find_origin(step: int, layers: Sequence[Layer], health: Sequence[LayerHealth], calls: Sequence[Call],
                grad_events: Sequence[GradEvent], input_health: Health, loss_health: Health,
                previous_params_finite: bool) -> Origin:
    """The origin of a step's non-finite values (invalid when there are none), by module call.

    Forward: the first call (in the order calls ended) whose floating inputs were finite and whose
    output was not; a module called several times is named with the call ("call 50 of 60"). The
    calls of an enclosing module end after their children's, so code outside any child module is
    named by its enclosing module's call. Backward: the first gradient, in the order backward ran,
    that was not finite, made by the backward of the call that took the tensor as input when that
    call's own output gradients were finite; a tensor no module took was consumed by the code of
    the innermost enclosing call whose output gradient was finite, else by the loss.
    """
    for i, lh in enumerate(health):
        if lh.params.has_nonfinite():
            return _at(step, layers, "update" if previous_params_finite else "parameter", i, previous_params_finite)
    if input_health.has_nonfinite():
        return _at(step, layers, "input", -1, True)
    bad = [k for k, c in enumerate(calls) if c.output_nonfinite]
    if bad:
        made = next((k for k in bad if calls[k].inputs_finite), bad[0])
        return _with_call(_at(step, layers, "forward", calls[made].module, calls[made].inputs_finite), calls[made])
    if loss_health.has_nonfinite():
        return _at(step, layers, "loss", -1, True)
    first = next((e for e in grad_events if e.nonfinite), None)
    if first is not None and first.consumers:
        k = next((k for k in first.consumers if calls[k].output_grads_finite is not False), first.consumers[0])
        return _with_call(_at(step, layers, "backward", calls[k].module, True), calls[k])
    if first is not None and first.producers:  # taken by code outside any module
        for k in _enclosing(calls, layers, first.producers[0]):
            if calls[k].output_grads_finite:
                return _with_call(_at(step, layers, "backward", calls[k].module, True), calls[k])
        return _at(step, layers, "backward", -1, True)
    # Only parameters' gradients went bad: the last module in forward order that holds them (then
    # those no hook saw called).
    for i in [c.module for c in reversed(calls)] + list(range(len(health) - 1, -1, -1)):
        if health[i].param_grads.has_nonfinite():
            return _at(step, layers, "backward", i, True)
    return Origin()


def apply_op_origin(origin: Origin, op: "OpOrigin", layers: Sequence[Layer]) -> None:
    """The op tier's finding on top of the map's, as the C++ applyCodeOrigin does: in forward (or
    the loss) the op, its line and the module whose own code ran it; in backward the op alone."""
    if op.backward != (origin.phase == "backward") or origin.phase not in ("forward", "loss", "backward"):
        return  # found elsewhere than where the map says the value was born
    origin.op = op.op
    origin.source = op.source
    if origin.phase == "forward" and op.module >= 0:
        if op.module != origin.layer:
            origin.call = origin.calls = 0  # the op names another module: the call was the map's
        origin.layer = op.module
        origin.layer_path = layers[op.module].path
        origin.produced = True


def explain(origin: Origin, input_health: Health, bad_samples: List[int], rows_note: str = "") -> str:
    """One plain sentence, worded as the C++ core words it; ``rows_note`` says along which
    dimension bad rows were told when the batch's could not be (an input origin only)."""
    o = origin
    where = "the loss" if o.layer < 0 else ("the model's own forward" if o.layer_path == "" else f"layer '{o.layer_path}'")
    if o.phase == "input":
        text = (f"The input batch holds {input_health.nan} NaN, {input_health.posinf} +Inf and "
                f"{input_health.neginf} -Inf values")
        if bad_samples:
            text += " (samples " + " ".join(str(i) for i in bad_samples) + ")"
        if rows_note:
            text += f" ({rows_note})"
        text += "; every layer downstream only passes them on."
    elif o.phase == "forward":
        if o.layer_path == "":
            text = ("The model's own forward (outside its modules) made a non-finite value" if o.produced
                    else "The model's own forward received non-finite inputs")
        else:
            text = (f"Layer '{o.layer_path}' turned finite inputs into non-finite outputs" if o.produced
                    else f"Layer '{o.layer_path}' received non-finite inputs")
    elif o.phase == "loss":
        text = "The model's outputs are finite but the loss is not"
    elif o.phase == "backward":
        text = f"The forward pass is finite; the backward pass of {where} made a non-finite gradient"
    elif o.phase == "parameter":
        text = f"The parameters of layer '{o.layer_path}' were already non-finite before this step"
    elif o.phase == "update":
        text = f"The optimizer update of the previous step made the parameters of layer '{o.layer_path}' non-finite"
    else:
        return ""
    if o.calls > 1 and o.phase in ("forward", "backward"):
        text += f" in call {o.call} of {o.calls}"
    if o.op:
        text += f" (first op: {o.op})"
    if o.phase != "input":
        text += "."
    return text


def layers_of(named_modules: Sequence[tuple]) -> List[Layer]:
    """Run-file layers from ``model.named_modules()``: ids in that order, each parent before its child."""
    ids: Dict[str, int] = {}
    layers: List[Layer] = []
    for path, module in named_modules:
        parent = -1
        if path != "":
            head = path.rsplit(".", 1)[0] if "." in path else ""
            while head not in ids and head != "":
                head = head.rsplit(".", 1)[0] if "." in head else ""
            parent = ids.get(head, -1)
        ids[path] = len(layers)
        layers.append(Layer(id=len(layers), path=path, type=type(module).__name__, parent=parent))
    return layers

