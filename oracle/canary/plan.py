"""Which canary modules and needle lengths are collected, from the run's typed options (`GateOptions`, read by
options.py and passed in: the canary plan sits below the options and never imports them).

A canary module is `canaries/test_<kind>.py` (or `test_<kind>_<more>.py`) for a kind of `CANARY_KINDS`: a new
kind is its name in that tuple plus its module. The context used to drop needle lengths comes from --oracle-context,
else from what the target is started with (`targets.planned_context`): never from a server query, so every
pytest-xdist worker collects the same items.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from oracle.canary.kinds import CANARY_CHECK, CANARY_KINDS
from oracle.canary.needle import default_lengths, split_lengths
from oracle.targets import planned_context

__all__ = ["CANARY_KINDS", "PlanOptions", "canary_kind", "crosstalk_levels", "ignored", "needle_plan",
           "resolve_context"]



class PlanOptions(Protocol):
    """What the plan reads of the run's `GateOptions`."""

    backend: str
    model: str | None
    server_args: str
    embedded: bool
    canary: object  # CanarySettings (oracle/checks/canaries/): kinds, context, needle_lengths, needle_depths

    def check(self, name: str): ...  # a check kind's settings: "conditions" has the ladder's levels


def canary_kind(module: Path) -> str | None:
    """The kind a module of canaries/ runs (test_code_result.py: code), or None for a file of no kind."""
    stem = module.stem
    kinds = [k for k in CANARY_KINDS if stem == f"test_{k}" or stem.startswith(f"test_{k}_")]
    return max(kinds, key=len) if kinds else None


def ignored(collection_path: Path, options: PlanOptions | None) -> bool | None:
    """pytest_ignore_collect's answer (plugin.py): with the gate on, canary modules of kinds not in --canaries
    are not collected; None: no opinion."""
    if options is None:
        return None
    kind = canary_kind(collection_path) if collection_path.suffix == ".py" else None
    if kind is not None and kind not in options.check(CANARY_CHECK).kinds:
        return True
    if kind == "crosstalk" and not crosstalk_levels(options):
        return True  # nothing ran at once: no item at all (never an empty parametrization, which skips)
    return None


def crosstalk_levels(options: PlanOptions) -> tuple[int, ...]:
    """The ladder levels of c >= 2, each the size of one crosstalk wave."""
    return tuple(sorted({c for c in options.check("conditions").ladder if c >= 2}))


def resolve_context(options: PlanOptions) -> tuple[int, str]:
    """(context length, where it came from), without asking the server."""
    if options.check(CANARY_CHECK).context:
        return options.check(CANARY_CHECK).context, "--oracle-context"
    return planned_context(options.backend, started_elsewhere=not options.embedded,
                           server_args=options.server_args, model=options.model)


def needle_plan(options: PlanOptions) -> tuple[list[int], list[int], list[int], int, str]:
    """(lengths collected, lengths dropped, depths, context, context source)."""
    ctx, source = resolve_context(options)
    given = options.check(CANARY_CHECK).needle_lengths
    lengths = list(given) if given else default_lengths(ctx)
    fit, dropped = split_lengths(lengths, ctx)
    return fit, dropped, list(options.check(CANARY_CHECK).needle_depths), ctx, source
