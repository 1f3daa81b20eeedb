"""An in-process backend (`hf`, `openvino`): the model is loaded here; no server, no URL.

A family whose capabilities declare `restartable` gets a new boot as a fresh load (openvino: a new pipeline,
a new compile); `hf` has nothing to restart. Without --model, hf loads the embedded GGUF and openvino the
embedded fp32 IR (`oracle models --path openvino-fp32`).
"""

from __future__ import annotations

from pathlib import Path

from oracle.backends import Backend, in_process_capabilities, make_in_process_backend, parse_backend
from oracle.targets.base import TargetError
from oracle.targets.cache import EmbeddedError, default_model

__all__ = ["InProcessTarget"]


def _default_model(family: str) -> Path:
    if family == "openvino":
        from oracle.targets.openvino_export import openvino_model

        try:
            return openvino_model("fp32")
        except EmbeddedError as exc:
            raise TargetError(f"--backend openvino: the embedded fp32 IR: {exc}") from None
    return default_model()


class InProcessTarget:
    kind = "in-process"
    configured_command = None
    log_path = None  # no server, no log

    def __init__(self, backend_name: str, model: str | None, *, dtype: str, ov_config: dict | None = None) -> None:
        self.backend_name, self.dtype, self.ov_config = backend_name, dtype, ov_config
        self.restartable = in_process_capabilities(backend_name).restartable
        self.model_path: Path = Path(model) if model else _default_model(parse_backend(backend_name).family)
        self.notes: list[str] = []

    def up(self) -> Backend:
        return self.load(self.dtype)

    def load(self, dtype: str) -> Backend:
        """The same weights in another dtype (the reference's precision floor loads a second copy)."""
        from oracle.backends.hf import HfLoadError
        from oracle.backends.openvino import OpenVINOLoadError

        try:
            return make_in_process_backend(self.backend_name, self.model_path, dtype=dtype, ov_config=self.ov_config)
        except (HfLoadError, OpenVINOLoadError) as exc:
            raise TargetError(str(exc)) from None

    def restart(self) -> Backend:
        if not self.restartable:
            raise TargetError(f"--backend {self.backend_name} runs in this process: there is no server to restart")
        return self.up()

    def stop(self) -> None:
        pass
