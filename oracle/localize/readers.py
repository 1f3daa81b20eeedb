"""One configuration loaded as a layer reader: token path in, `LayerCapture` out. One reader per family that can
show its layers; the families that talk HTTP have none (`source.http_refusal` says which to use instead).

    read = load_reader(config)          # NoLayers / LocalizeInput naming the fix
    capture = read(path_ids)
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from oracle.backends import family_of, make_in_process_backend
from oracle.localize.compare import LayerCapture
from oracle.localize.hf_layers import hf_capture
from oracle.localize.openvino_layers import LayerEndsNotFound, openvino_capture
from oracle.localize.runner_layers import NoLayers, runner_capture
from oracle.localize.source import Configuration, LocalizeInput
from oracle.targets.cache import EmbeddedError, default_model

__all__ = ["LayerReader", "READERS", "load_reader"]

LayerReader = Callable[[list[int]], LayerCapture]


def _backend(config: Configuration):
    try:
        model = config.model
        if model is None and family_of(config.backend).layers == "torch-module":
            model = default_model()
        return make_in_process_backend(config.backend, model, settings=config.load_settings(),
                                       default_model=default_model)
    except family_of(config.backend).load_errors + (EmbeddedError,) as exc:
        raise LocalizeInput(f"{config.label()}: {exc}") from None


def _hf(config: Configuration) -> LayerReader:
    backend = _backend(config)
    return lambda ids: hf_capture(backend.model, ids)


def _python(config: Configuration) -> LayerReader:
    backend = _backend(config)
    return lambda ids: runner_capture(backend.runner, ids, where=f"runner {backend.locator}")


def _openvino(config: Configuration) -> LayerReader:
    from oracle.backends import parse_backend
    from oracle.backends.openvino import DEVICES

    platform = parse_backend(config.backend).platform
    if platform not in DEVICES:
        raise LocalizeInput(f"--backend {config.backend}: unknown OpenVINO device")
    folder = Path(config.model) if config.model else None
    if folder is None:
        try:
            from oracle.targets.openvino_export import openvino_model

            folder = openvino_model("fp32")
        except EmbeddedError as exc:
            raise LocalizeInput(f"{config.label()}: {exc}") from None
    if not (folder / "openvino_model.xml").is_file():
        raise LocalizeInput(f"{config.label()}: no openvino_model.xml in {folder}; give the IR folder the gate ran")

    def read(ids: list[int]) -> LayerCapture:
        try:
            return openvino_capture(folder, ids, device=DEVICES[platform], config=dict(config.ov_config))
        except LayerEndsNotFound as exc:
            raise NoLayers(f"{folder}: {exc}") from None
    return read


# By the family descriptor's `layers`: how that family shows its layers.
READERS: dict[str, Callable[[Configuration], LayerReader]] = {"torch-module": _hf, "runner": _python, "ir": _openvino}


def load_reader(config: Configuration) -> LayerReader:
    make = READERS.get(family_of(config.backend).layers)
    if make is None:
        raise NoLayers(f"{config.label()}: the {config.family} family shows no layers; localize reads "
                       f"{', '.join(READERS)}")
    return make(config)
