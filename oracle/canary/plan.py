"""Which canary modules and needle lengths are collected (registered by plugin.py), from the run's typed
options (`GateOptions.canary`, declared in options.py).

A canary module is `canaries/test_<kind>.py` (or `test_<kind>_<more>.py`) for a kind of `CANARY_KINDS`: a new
kind is its name in that tuple plus its module. The context used to drop needle lengths comes from --context,
else from what the target is started with (`targets.planned_context`): never from a server query, so every
pytest-xdist worker collects the same items.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.canary.needle import default_lengths, split_lengths
from oracle.option_types import CANARY_KINDS
from oracle.options import GateOptions, options_of
from oracle.targets import planned_context

__all__ = ["CANARY_KINDS", "canary_kind", "crosstalk_levels", "needle_plan", "resolve_context"]


def canary_kind(module: Path) -> str | None:
    """The kind a module of canaries/ runs (test_code_result.py: code), or None for a file of no kind."""
    stem = module.stem
    kinds = [k for k in CANARY_KINDS if stem == f"test_{k}" or stem.startswith(f"test_{k}_")]
    return max(kinds, key=len) if kinds else None


def pytest_ignore_collect(collection_path: Path, config: pytest.Config):
    """With the gate on, canary modules of kinds not in --canaries are not collected."""
    options = options_of(config)
    if options is None:
        return None
    kind = canary_kind(collection_path) if collection_path.suffix == ".py" else None
    if kind is not None and kind not in options.canary.kinds:
        return True
    if kind == "crosstalk" and not crosstalk_levels(options):
        return True  # nothing ran at once: no item at all (never an empty parametrization, which skips)
    return None


def crosstalk_levels(options: GateOptions) -> tuple[int, ...]:
    """The ladder levels of c >= 2, each the size of one crosstalk wave."""
    return tuple(sorted({c for c in options.ladder if c >= 2}))


def resolve_context(options: GateOptions) -> tuple[int, str]:
    """(context length, where it came from), without asking the server."""
    if options.canary.context:
        return options.canary.context, "--context"
    return planned_context(options.backend, started_elsewhere=not options.embedded,
                           server_args=options.server_args, model=options.model)


def needle_plan(options: GateOptions) -> tuple[list[int], list[int], list[int], int, str]:
    """(lengths collected, lengths dropped, depths, context, context source)."""
    ctx, source = resolve_context(options)
    given = options.canary.needle_lengths
    lengths = list(given) if given else default_lengths(ctx)
    fit, dropped = split_lengths(lengths, ctx)
    return fit, dropped, list(options.canary.needle_depths), ctx, source
