"""Where a step's first non-finite value was born, by the C++ core's rules (core/src/probe/origin.cpp).

The rules read the per-layer map alone, in this order: parameters already non-finite (made so by
the previous step's update, or before it); the input batch; the first module in forward order
whose output is non-finite (it *produced* the value when its inputs were finite, else it passed it
on); the loss; then backward, from the last leaf module to the first.
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


def find_origin(step: int, layers: Sequence[Layer], health: Sequence[LayerHealth], forward_order: Sequence[int],
                input_health: Health, loss_health: Health, previous_params_finite: bool,
                input_grad_finite: Sequence[Optional[bool]] = ()) -> Origin:
    """The origin of a step's non-finite values (invalid when there are none).

    Where the C++ core re-runs the step with op-level checks to name code outside any child
    module, the recorder tells it from what it measured: a module that received a non-finite
    input no module made was fed by its enclosing module's own code (the innermost ancestor whose
    inputs were finite); a gradient that went bad between two modules, with the later one handing
    back a finite gradient, was made by the code of the innermost ancestor whose output gradient
    was finite.
    """
    for i, lh in enumerate(health):
        if lh.params.has_nonfinite():
            return _at(step, layers, "update" if previous_params_finite else "parameter", i, previous_params_finite)
    if input_health.has_nonfinite():
        return _at(step, layers, "input", -1, True)
    for i in forward_order:
        if health[i].forward.has_nonfinite():
            if health[i].input_finite:
                return _at(step, layers, "forward", i, True)
            for a in _ancestors(layers, i):
                if health[a].input_finite:
                    return _at(step, layers, "forward", a, True)
            return _at(step, layers, "forward", i, False)
    if loss_health.has_nonfinite():
        return _at(step, layers, "loss", -1, True)
    has_child = [False] * len(layers)
    for layer in layers:
        if layer.parent >= 0:
            has_child[layer.parent] = True
    leaves = [i for i in forward_order if not has_child[i]]
    for k in range(len(leaves) - 1, -1, -1):
        lh = health[leaves[k]]
        if lh.grad.has_nonfinite():
            # The gradient into leaf k's output is made by the backward of what consumed it: the
            # next leaf, unless that one handed back a finite gradient; the loss after the last.
            consumer = leaves[k + 1] if k + 1 < len(leaves) else -1
            if consumer < 0 or (consumer < len(input_grad_finite) and input_grad_finite[consumer]):
                for a in _ancestors(layers, leaves[k]):
                    if health[a].grad.present and not health[a].grad.has_nonfinite():
                        return _at(step, layers, "backward", a, True)
            return _at(step, layers, "backward", consumer, True)
        if lh.param_grads.has_nonfinite():
            return _at(step, layers, "backward", leaves[k], True)
    return Origin()


def apply_op_origin(origin: Origin, op: "OpOrigin", layers: Sequence[Layer]) -> None:
    """The op tier's finding on top of the map's, as the C++ applyCodeOrigin does: in forward (or
    the loss) the op, its line and the module whose own code ran it; in backward the op alone."""
    if op.backward != (origin.phase == "backward") or origin.phase not in ("forward", "loss", "backward"):
        return  # found elsewhere than where the map says the value was born
    origin.op = op.op
    origin.source = op.source
    if origin.phase == "forward" and op.module >= 0:
        origin.layer = op.module
        origin.layer_path = layers[op.module].path
        origin.produced = True


def explain(origin: Origin, input_health: Health, bad_samples: List[int]) -> str:
    """One plain sentence, worded as the C++ core words it."""
    o = origin
    where = "the loss" if o.layer < 0 else ("the model's own forward" if o.layer_path == "" else f"layer '{o.layer_path}'")
    if o.phase == "input":
        text = (f"The input batch holds {input_health.nan} NaN, {input_health.posinf} +Inf and "
                f"{input_health.neginf} -Inf values")
        if bad_samples:
            text += " (samples " + " ".join(str(i) for i in bad_samples) + ")"
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

