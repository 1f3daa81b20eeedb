"""A server that is already running (`--oracle-url`): reached, never started, stopped or restarted by oracle."""

from __future__ import annotations

from pathlib import Path

from oracle.backends import Backend
from oracle.targets.base import TargetError, connect

__all__ = ["UrlTarget"]


class UrlTarget:
    kind = "url"
    restartable = False
    configured_command = None
    log_path = None  # the server's log is its owner's

    def __init__(self, backend_name: str, url: str, *, timeout_s: float | None) -> None:
        self.backend_name, self.url, self.timeout_s = backend_name, url, timeout_s
        self.model_path: Path | None = None
        self.notes: list[str] = []

    def up(self) -> Backend:
        return connect(self.backend_name, self.url, timeout_s=self.timeout_s, notes=self.notes,
                       unhealthy=f"--oracle-url {self.url}: the server does not answer its health check; start it first, "
                                 "or use --launch so that oracle starts it")

    def restart(self) -> Backend:
        raise TargetError("--boots needs a server oracle can restart: use --launch CMD instead of --oracle-url")

    def stop(self) -> None:
        pass
