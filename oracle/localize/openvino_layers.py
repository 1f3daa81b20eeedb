"""The `openvino` family's layers: the IR's residual-stream adds that end each decoder layer, added as model outputs
(`Model.add_outputs`) and matched by layer index, not by node name (an int8 or int4 IR names its nodes otherwise).

    outputs = ir_layer_outputs(Path("ir/openvino_model.xml"), path_ids, device="CPU", config={})
    capture = openvino_capture(Path("ir"), path_ids, device="CPU", config={})

Per decoder layer i, the adds inside the layer's own scope (`...layers.i/...`) whose output is as wide as the
hidden state are the residual stream in topological order: the last one is the layer's output (`layers.i`), the
first, where there are two, the residual after attention (`layers.i.attn`, a part). No logit lens: the IR's final
norm and head are not a separate graph.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from oracle.localize.compare import LayerCapture, LayerOutput

__all__ = ["LayerEndsNotFound", "ir_layer_outputs", "layer_ends", "openvino_capture"]

_SCOPE = re.compile(r"layers\.(\d+)/")  # a node directly in decoder layer i's scope (not in a module inside it)


class LayerEndsNotFound(ValueError):
    """The IR's nodes do not show its decoder layers the way the export names them; the message says so."""


def _width(port) -> int | None:
    shape = port.get_partial_shape()
    if shape.rank.is_dynamic or shape.rank.get_length() != 3 or shape[2].is_dynamic:
        return None
    return shape[2].get_length()


def layer_ends(model, hidden: int | None = None) -> list[tuple[str, int, bool, object]]:
    """(row name, layer index, whole?, output port) of the residual adds of each decoder layer, in model order."""
    adds: dict[int, list] = defaultdict(list)
    for op in model.get_ordered_ops():
        if op.get_type_name() != "Add":
            continue
        found = _SCOPE.search(op.get_friendly_name())
        if found:
            adds[int(found.group(1))].append(op.output(0))
    widths = [w for ports in adds.values() for w in map(_width, ports) if w]
    hidden = hidden or (max(set(widths), key=widths.count) if widths else None)
    rows = []
    for i in sorted(adds):
        stream = [p for p in adds[i] if _width(p) == hidden]
        if not stream:
            continue
        if len(stream) > 1:
            rows.append((f"layers.{i}.attn", i, False, stream[0]))
        rows.append((f"layers.{i}", i, True, stream[-1]))
    if not rows or sorted(adds) != list(range(len(adds))):
        raise LayerEndsNotFound("the IR shows no decoder layers by the export's node names (`...layers.N/...` adds "
                                f"{hidden or '?'} wide); localize reads IRs exported by optimum-cli export openvino")
    return rows


def _inputs(compiled, path_ids: list[int]) -> dict:
    ids = np.array([list(path_ids)], dtype=np.int64)
    inputs = {"input_ids": ids, "attention_mask": np.ones_like(ids),
              "position_ids": np.arange(ids.shape[1], dtype=np.int64)[None, :], "beam_idx": np.zeros(1, np.int32)}
    names = {n for port in compiled.inputs for n in port.get_names()}
    return {k: v for k, v in inputs.items() if k in names}


def ir_layer_outputs(ir, path_ids: list[int], *, device: str = "CPU", config: dict | None = None,
                     core=None, parts: bool = True) -> dict[str, np.ndarray]:
    """Each layer row's output at every position of `path_ids` (layer name -> (positions, hidden)), one pass.
    `ir`: the openvino_model.xml path, or an `openvino.Model` (its outputs are added to it); parts=False: the whole
    layers' outputs only (what a runner's layer_outputs returns)."""
    import openvino as ov

    core = core or ov.Core()
    model = core.read_model(str(ir)) if isinstance(ir, (str, Path)) else ir
    rows = [row for row in layer_ends(model) if parts or row[2]]
    outputs = model.add_outputs([port for _, _, _, port in rows])
    compiled = core.compile_model(model, device, {k: v for k, v in (config or {}).items()
                                                  if k != "KV_CACHE_PRECISION"})
    request = compiled.create_infer_request()
    request.reset_state()
    result = request.infer(_inputs(compiled, path_ids))
    # add_outputs returns the new outputs in the order asked; the compiled model keeps them after the logits
    first = len(compiled.outputs) - len(outputs)
    return {name: np.array(result[compiled.output(first + k)][0], copy=True)
            for k, (name, _, _, _) in enumerate(rows)}


def openvino_capture(ir, path_ids: list[int], *, device: str = "CPU", config: dict | None = None,
                     position: int = -1) -> LayerCapture:
    """The layer rows at `position` of `path_ids`; `ir`: an IR folder, or an `openvino.Model`."""
    import openvino as ov

    model = ov.Core().read_model(str(Path(ir) / "openvino_model.xml")) if isinstance(ir, (str, Path)) else ir
    parts = {name: (layer, whole) for name, layer, whole, _ in layer_ends(model)}
    outputs = ir_layer_outputs(model, path_ids, device=device, config=config)
    return LayerCapture(tuple(LayerOutput(name=name, layer=parts[name][0], whole=parts[name][1],
                                          vector=array[position].astype(np.float64))
                              for name, array in outputs.items()))
