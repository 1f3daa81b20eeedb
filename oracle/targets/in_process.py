"""An in-process backend (`hf`): the model is loaded here; no server, no URL, nothing to restart."""

from __future__ import annotations

from pathlib import Path

from oracle.backends import Backend, make_in_process_backend
from oracle.targets.base import TargetError
from oracle.targets.cache import default_model

__all__ = ["InProcessTarget"]


class InProcessTarget:
    kind = "in-process"
    restartable = False
    configured_command = None
    log_path = None  # no server, no log

    def __init__(self, backend_name: str, model: str | None, *, dtype: str) -> None:
        self.backend_name, self.dtype = backend_name, dtype
        self.model_path: Path = Path(model) if model else default_model()
        self.notes: list[str] = []

    def up(self) -> Backend:
        return self.load(self.dtype)

    def load(self, dtype: str) -> Backend:
        """The same weights in another dtype (the reference's precision floor loads a second copy)."""
        from oracle.backends.hf import HfLoadError

        try:
            return make_in_process_backend(self.backend_name, self.model_path, dtype=dtype)
        except HfLoadError as exc:
            raise TargetError(str(exc)) from None

    def restart(self) -> Backend:
        raise TargetError(f"--backend {self.backend_name} runs in this process: there is no server to restart")

    def stop(self) -> None:
        pass
