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

    def __init__(self, backend_name: str, model: str | None, *, dtype: str, ov_config: dict | None = None,
                 runner_args: tuple[tuple[str, str], ...] = ()) -> None:
        self.backend_name, self.dtype, self.ov_config, self.runner_args = backend_name, dtype, ov_config, runner_args
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
        return self.load(self.dtype)

    def load(self, dtype: str) -> Backend:
        """The same weights in another dtype (the reference's precision floor loads a second copy)."""
        try:
            backend = make_in_process_backend(self.backend_name, self.model_path, dtype=dtype,
                                              ov_config=self.ov_config, runner_args=self.runner_args,
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
