"""The python family's options, on its own `--help` group: `--runner-arg`, the keyword arguments of the runner's
factory (`--backend=python:MODULE:FACTORY`). Light: the plugin declares it in every pytest session.

    kwargs = settings_of(config.option)     # {"runner_args": (("ir", "int4"),)}
"""

from __future__ import annotations

import pytest

__all__ = ["add_options", "given", "refusal", "runner_arg", "settings_of"]



def runner_arg(value: str) -> tuple[str, str]:
    """--runner-arg k=v: one keyword argument (a string) of the python runner's factory."""
    key, eq, val = value.partition("=")
    if not eq or not key.strip().isidentifier():
        raise pytest.UsageError(f"--runner-arg {value!r}: write NAME=VALUE with NAME a Python identifier (a keyword "
                                "of the runner's factory), e.g. --runner-arg ir=int4")
    return key.strip(), val


def add_options(group) -> None:
    group.addoption("--runner-arg", metavar="NAME=VALUE", type=runner_arg, action="append", default=None,
                    help="a keyword argument (a string) for the factory of --backend=python:MODULE:FACTORY, e.g. "
                         "--runner-arg ir=int4; repeat it for several (default: none)")


def given(option) -> tuple[str, ...]:
    """Its options given on this command line (another family refuses them)."""
    return ("--runner-arg",) if option.runner_arg else ()


def settings_of(option) -> dict:
    """Its backend's load keywords."""
    return {"runner_args": tuple(option.runner_arg or ())}


def refusal(flag: str, backend: str) -> str:
    """The refusal of its option `flag` given with another family's `--backend`."""
    return (f"{flag} is for --backend=python:MODULE:FACTORY (the runner's factory); --backend {backend} takes none: "
            "drop it")
