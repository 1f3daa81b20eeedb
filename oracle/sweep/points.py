"""A point's server: the user's launch command (or the embedded server's --server-args) with the point's settings
applied through `launch_command.py`, and the environment variables the point's own gate process gets.

    target = PointTarget.of(point, launch="llama-server -m m.gguf --port {port} -ctk f16", server_args="")
    target.launch       # 'llama-server -m m.gguf --port {port} -ctk q8_0 -t 2'
    target.option_args  # ['--launch=llama-server ... -t 2']

A flag already in the command takes the point's value where it stood (every occurrence replaced); a new one goes
after the last flag, before any trailing positionals. An environment axis is an assignment in front of the launch
command; for the embedded server (no --launch) it is set in the point's gate process, whose server inherits it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from oracle.launch_command import Change, Item, apply, parse_launch, render_words
from oracle.sweep.grid import Point, Setting

__all__ = ["PointTarget", "with_settings"]

_PROGRAM = "server"  # a stand-in program, so that --server-args parse as a command's flags


def with_settings(command: str, settings: tuple[Setting, ...] | list[Setting]) -> str:
    """The command with each setting applied: a flag's value set, an environment assignment put in front."""
    launch = parse_launch(command)
    changes = []
    for s in settings:
        if s.kind == "env":
            changes.append(Change("env", s.name, dict(launch.env).get(s.name), s.value))
        else:
            changes.append(Change("flag", s.name, launch.flag_items(s.name) or None, (Item(s.name, s.value),)))
    return apply(launch, changes).render()


@dataclass(frozen=True)
class PointTarget:
    """What one point's gate process is given: `--launch CMD`, or `--server-args ARGS` plus environment."""

    launch: str | None
    server_args: str | None
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, point: Point, *, launch: str | None, server_args: str) -> "PointTarget":
        if launch is not None:
            return cls(with_settings(launch, point.settings), None)
        flags = [s for s in point.settings if s.kind == "flag"]
        args = with_settings(f"{_PROGRAM} {server_args}", flags) if flags else f"{_PROGRAM} {server_args}"
        words = parse_launch(args).words()[1:]
        return cls(None, render_words(words), {s.name: s.value for s in point.settings if s.kind == "env"})

    @property
    def option_args(self) -> list[str]:
        if self.launch is not None:
            return [f"--launch={self.launch}"]
        return [f"--server-args={self.server_args}"] if self.server_args else []
