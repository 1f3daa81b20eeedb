"""Which canary modules and needle lengths are collected (registered by plugin.py; the options are in options.py).

The context used to drop needle lengths comes from --context, else from what the target is
started with (`targets.planned_context`): never from a server query, so every pytest-xdist
worker collects the same items.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.canary.needle import default_lengths, split_lengths
from oracle.option_types import CANARY_KINDS
from oracle.targets import planned_context

__all__ = ["CANARY_KINDS", "canary_kinds", "crosstalk_levels", "needle_plan", "resolve_context"]

_FILES = {"test_code_result.py": "code", "test_needle.py": "needle", "test_repeats.py": "repeats",
          "test_crosstalk.py": "crosstalk"}


def canary_kinds(config: pytest.Config) -> tuple[str, ...]:
    return tuple(k for k in config.getoption("canaries").split(",") if k in CANARY_KINDS)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config):
    """With the gate on, canary modules of families not in --canaries are not collected."""
    if config.getoption("backend", None) is None:
        return None
    kind = _FILES.get(collection_path.name)
    if kind is not None and kind not in canary_kinds(config):
        return True
    if kind == "crosstalk" and not crosstalk_levels(config):
        return True  # nothing ran at once: no item at all (never an empty parametrization, which skips)
    return None


def crosstalk_levels(config: pytest.Config) -> tuple[int, ...]:
    """The ladder levels of c >= 2, each the size of one crosstalk wave."""
    return tuple(sorted({c for c in (config.getoption("ladder") or ()) if c >= 2}))


def resolve_context(config: pytest.Config) -> tuple[int, str]:
    """(context length, where it came from), without asking the server."""
    explicit = config.getoption("context")
    if explicit:
        return explicit, "--context"
    started_elsewhere = bool(config.getoption("url") or config.getoption("servers") or config.getoption("launch"))
    return planned_context(config.getoption("backend"), started_elsewhere=started_elsewhere,
                           server_args=config.getoption("server_args") or "", model=config.getoption("model"))


def needle_plan(config: pytest.Config) -> tuple[list[int], list[int], list[int], int, str]:
    """(lengths collected, lengths dropped, depths, context, context source)."""
    ctx, source = resolve_context(config)
    given = config.getoption("needle_lengths")
    lengths = [int(n) for n in given.split(",")] if given else default_lengths(ctx)
    fit, dropped = split_lengths(lengths, ctx)
    depths = [int(d) for d in config.getoption("needle_depths").split(",")]
    return fit, dropped, depths, ctx, source
