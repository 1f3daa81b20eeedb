"""The hf family's options, on its own `--help` group: `--dtype`, the weights and compute dtype of its in-process
load. Light (no torch): the plugin declares it in every pytest session.

    kwargs = settings_of(config.option)     # {"dtype": "float32"}: HfBackend's load keywords
"""

from __future__ import annotations

import pytest

__all__ = ["DTYPES", "add_options", "dtype", "given", "refusal", "settings_of"]

DTYPES = ("float32", "float16", "bfloat16")  # what HfBackend loads; here so that the options never import torch


def dtype(value: str) -> str:
    if value not in DTYPES:
        raise pytest.UsageError(f"--dtype {value!r}: must be one of {', '.join(DTYPES)}")
    return value


def add_options(group) -> None:
    group.addoption("--dtype", metavar="DTYPE", type=dtype, default=None,
                    help="weights and compute dtype of the in-process hf backend: float32, float16 or bfloat16 "
                         "(default: float32)")


def given(option) -> tuple[str, ...]:
    """Its options given on this command line (another family refuses them)."""
    return ("--dtype",) if option.dtype is not None else ()


def settings_of(option) -> dict:
    """Its backend's load keywords."""
    return {"dtype": option.dtype or "float32"}


def refusal(flag: str, backend: str) -> str:
    """The refusal of its option `flag` given with another family's `--backend`."""
    return (f"{flag} means nothing for --backend {backend}: only --backend hf loads the model with it (a server's "
            "own settings go in its command); drop it")
