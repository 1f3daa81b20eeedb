"""What every target is: something that brings up a server (or an in-process model) and hands back its backend.

    target = make_target(options, worker=0, log_dir=report_dir)
    backend = target.up(); ...; backend = target.restart(); ...; target.stop()
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from oracle.backends import Backend, RequestFailed, make_backend

__all__ = ["EmbeddedTarget", "Target", "TargetError", "connect"]


@dataclass(frozen=True)
class EmbeddedTarget:
    """The command of an embedded server, ready for a `LaunchedTarget`."""

    command: str  # with {port} where the port goes
    env: dict[str, str] | None
    model: Path  # the GGUF llama-server loads, or the Hugging Face folder vLLM serves


class TargetError(RuntimeError):
    """The target cannot be brought up; the message says what to fix."""


class Target(Protocol):
    kind: str  # "url", "launch", "embedded" or "in-process" (the report's identity.target)
    restartable: bool  # oracle can restart it (--boots)
    model_path: Path | None  # the model file oracle knows of (embedded, in-process, --oracle-model)
    configured_command: str | None  # the launch command with {port} left as written
    log_path: Path | None  # the running server's log, when oracle started it
    notes: list[str]  # what the report should say about how the target was reached

    def up(self) -> Backend: ...

    def restart(self) -> Backend: ...

    def stop(self) -> None: ...


def connect(backend_name: str, url: str, *, timeout_s: float | None, notes: list[str], unhealthy: str = "") -> Backend:
    """The backend for the server at url; a family that must pick its route does it now (noted).
    unhealthy: when given, the server must pass its health check first, else TargetError with this message."""
    backend = make_backend(backend_name, url, timeout_s=timeout_s)
    if unhealthy and not backend.healthy():
        raise TargetError(unhealthy)
    if backend.capabilities.route_choice:
        try:
            note = backend.choose_route()
        except RequestFailed as exc:
            raise TargetError(f"could not find a completion route: {exc}") from None
        if note:
            notes.append(note)
    return backend
