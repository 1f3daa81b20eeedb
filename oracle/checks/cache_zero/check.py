"""The cache_zero check's descriptor (`CHECK`) and its parts: loaded on first use of the package's names
(oracle/checks/cache_zero/__init__.py), not with its options."""

from __future__ import annotations

from oracle.checks.cache_zero.producer import CacheZeroChecks
from oracle.checks.cache_zero.state import CacheZeroState
from oracle.checks.descriptor import CheckDescriptor, CheckItem, CheckParts, Producers, no_requests
from oracle.checks.per_server import server_items
from oracle.report import evidence as section

__all__ = ["CHECK", "CacheZeroChecks", "CacheZeroState"]


def items(plan) -> list[CheckItem]:
    """Always: the run's evidence, after every prompt's item; one per server under pytest -n."""
    return server_items(plan, "cache-zero", "cache_zero")


def build(parts: CheckParts) -> Producers:
    checks = CacheZeroChecks(parts.plan, parts.recorder, parts.prompts, parts.state)
    return Producers({"cache_zero": checks.cache_check}, observe=checks.observe)


CHECK = CheckDescriptor(name="cache_zero", title="cache-zero", order=20, kinds=("cache_zero",), items=items,
                        build=build, state=CacheZeroState, sections=(section,),
                        plan_part=no_requests)  # judged from runs the plan counts already
