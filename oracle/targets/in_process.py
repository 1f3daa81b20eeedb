"""An in-process backend (`hf`, `openvino`): the model is loaded here; no server, no URL.

A family whose capabilities declare `restartable` gets a new boot as a fresh load (openvino: a new pipeline,
a new compile); `hf` has nothing to restart. Without --model the family's descriptor names what loads
(`default_model`: hf the embedded GGUF, openvino the embedded fp32 IR, `oracle models --path openvino-fp32`).
"""

from __future__ import annotations

from pathlib import Path

from oracle.backends import Backend, family_of, make_in_process_backend, parse_backend
from oracle.run.gguf import gguf_context_length
from oracle.targets.base import TargetError
from oracle.targets.cache import EmbeddedError

__all__ = ["InProcessTarget", "planned_context"]

PLANNED_CONTEXT = 8192  # assumed before the model loads; its own limit is read when it loads


def planned_context(model: str | None, server_args: str) -> tuple[int, str]:
    """(context, where it came from) of a model loaded in process, before it loads: a GGUF's context_length
    when it is below 8192, else 8192."""
    trained = gguf_context_length(model) if model else None
    if trained and trained < PLANNED_CONTEXT:
        return trained, f"context_length {trained} in {Path(model).name}"
    return PLANNED_CONTEXT, f"{PLANNED_CONTEXT} (in process: the model's own limit is read when it loads)"


class InProcessTarget:
    kind = "in-process"
    configured_command = None
    log_path = None  # no server, no log

    def __init__(self, backend_name: str, model: str | None, *, dtype: str, ov_config: dict | None = None,
                 runner_args: tuple[tuple[str, str], ...] = ()) -> None:
        self.backend_name, self.dtype, self.ov_config, self.runner_args = backend_name, dtype, ov_config, runner_args
        self.descriptor = family_of(backend_name)
        self.restartable = self.descriptor.capabilities.restartable
        # A family without a default model (python: the runner names its own) is read from the backend once loaded.
        self.model_path: Path | None = Path(model) if model else self._default_model()
        self.notes: list[str] = []

    def _default_model(self) -> Path | None:
        if self.descriptor.default_model is None:
            return None
        try:
            return self.descriptor.default_model()
        except EmbeddedError as exc:
            raise TargetError(f"--backend {parse_backend(self.backend_name).family}: {exc}") from None

    def up(self) -> Backend:
        return self.load(self.dtype)

    def load(self, dtype: str) -> Backend:
        """The same weights in another dtype (the reference's precision floor loads a second copy)."""
        try:
            backend = make_in_process_backend(self.backend_name, self.model_path, dtype=dtype,
                                              ov_config=self.ov_config, runner_args=self.runner_args)
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
