"""An in-process backend (`hf`, `openvino`): the model is loaded here; no server, no URL.

A family whose capabilities declare `restartable` gets a new boot as a fresh load (openvino: a new pipeline,
a new compile); `hf` has nothing to restart. Without --oracle-model the family's descriptor names what loads
(`targets.families`' `default_model`: hf the embedded GGUF, openvino the embedded fp32 IR, `oracle models
--path openvino-fp32`); a python runner that names no model reads its tokenizer from the embedded GGUF.
"""

from __future__ import annotations

from pathlib import Path

from oracle.backends import Backend, family_of, make_in_process_backend, parse_backend
from oracle.targets.base import TargetError
from oracle.targets.cache import EmbeddedError, default_model
from oracle.targets.families import target_of

__all__ = ["InProcessTarget"]


class InProcessTarget:
    kind = "in-process"
    configured_command = None
    log_path = None  # no server, no log

    def __init__(self, backend_name: str, model: str | None, *, settings: dict | None = None) -> None:
        # settings: the family's load keywords (GateOptions.family_settings), its backend's alone
        self.backend_name, self.settings = backend_name, dict(settings or {})
        self.descriptor, self.plan = family_of(backend_name), target_of(backend_name)
        self.restartable = self.descriptor.capabilities.restartable
        # A family without a default model (python: the runner names its own) is read from the backend once loaded.
        self.model_path: Path | None = Path(model) if model else self._default_model()
        self.notes: list[str] = []

    def _default_model(self) -> Path | None:
        if self.plan.default_model is None:
            return None
        try:
            return self.plan.default_model()
        except EmbeddedError as exc:
            raise TargetError(f"--backend {parse_backend(self.backend_name).family}: {exc}") from None

    def up(self) -> Backend:
        return self.load()

    def load(self, dtype: str | None = None) -> Backend:
        """The model as configured, or the same weights in another dtype (the reference's precision floor loads a
        second copy; only a family that keeps one, `capabilities.precision_floor`, loads in a dtype)."""
        settings = self.settings if dtype is None else {**self.settings, "dtype": dtype}
        try:
            backend = make_in_process_backend(self.backend_name, self.model_path, settings=settings,
                                              default_model=default_model)
        except self.descriptor.load_errors as exc:
            raise TargetError(str(exc)) from None
        self.model_path = self.model_path or backend.model_path
        return backend

    def restart(self) -> Backend:
        if not self.restartable:
            raise TargetError(f"--backend {self.backend_name} runs in this process: there is no server to restart")
        return self.up()

    def stop(self) -> None:
        pass
