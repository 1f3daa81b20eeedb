"""A `python:MODULE:FACTORY` runner's layers, through the optional method of the runner protocol (docs/runner.md):

    layer_outputs(token_ids) -> dict[str, numpy.ndarray]   # layer name -> its output at each position, model order

oracle calls `reset()` first, then `layer_outputs` with the whole path; it reads each array's row at the localized
position. A runner without the method shows no layers (`NoLayers`, naming the method to add). Every row is a whole
layer (its index its place in the dict); runners give no logit lens.
"""

from __future__ import annotations

import numpy as np

from oracle.localize.compare import LayerCapture, LayerOutput

__all__ = ["LAYER_METHOD", "NoLayers", "runner_capture"]

LAYER_METHOD = "layer_outputs"


class NoLayers(ValueError):
    """The configuration shows no layers (a runner without layer_outputs); the message says what to add."""


def runner_capture(runner, path_ids: list[int], *, where: str, position: int = -1) -> LayerCapture:
    """The runner's layer outputs at `position` of `path_ids`."""
    method = getattr(runner, LAYER_METHOD, None)
    if not callable(method):
        raise NoLayers(f"{where}: this runner shows no layers: give it the optional method "
                       f"{LAYER_METHOD}(token_ids) -> dict[str, numpy.ndarray] (layer name to that layer's output "
                       "at each position, in model order; docs/runner.md)")
    runner.reset()
    try:
        outputs = method(list(path_ids))
    except Exception as exc:  # the user's code: any error is named with the runner, never retried
        raise NoLayers(f"{where}: {LAYER_METHOD}() raised {type(exc).__name__}: {exc}") from None
    if not isinstance(outputs, dict) or not outputs:
        raise NoLayers(f"{where}: {LAYER_METHOD}() returned {type(outputs).__name__}, not a non-empty dict of "
                       "layer name -> numpy array")
    rows = []
    for k, (name, value) in enumerate(outputs.items()):
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise NoLayers(f"{where}: {LAYER_METHOD}()[{name!r}] is not numbers ({type(value).__name__})") from None
        if array.ndim < 2 or array.shape[0] != len(path_ids):
            raise NoLayers(f"{where}: {LAYER_METHOD}()[{name!r}] has shape {array.shape}; expected "
                           f"({len(path_ids)}, ...): one row per position of the {len(path_ids)} token ids")
        rows.append(LayerOutput(name=str(name), layer=k, whole=True, vector=array[position].ravel().copy()))
    return LayerCapture(tuple(rows))
