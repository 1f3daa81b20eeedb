"""The embedded models by name, for `oracle models`: the SmolLM2 GGUF and its OpenVINO IRs.

    model_path("openvino-int4")     # the IR folder, exported on first use
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from oracle.targets.cache import EmbeddedError, default_model
from oracle.targets.openvino_export import BUILT_BY_DEFAULT, WEIGHT_FORMATS, openvino_model

__all__ = ["LISTED", "MODELS", "model_path"]

MODELS: dict[str, Callable[[], Path]] = {"smollm2-gguf": default_model}
MODELS.update({f"openvino-{fmt}": (lambda fmt=fmt: openvino_model(fmt)) for fmt in WEIGHT_FORMATS})
# What `oracle models` builds and lists; the others are built only when named (`--path openvino-fp16`).
LISTED = ("smollm2-gguf", *(f"openvino-{fmt}" for fmt in BUILT_BY_DEFAULT))


def model_path(name: str) -> Path:
    if name not in MODELS:
        raise EmbeddedError(f"no embedded model {name!r}: choose one of {', '.join(MODELS)}")
    return MODELS[name]()
