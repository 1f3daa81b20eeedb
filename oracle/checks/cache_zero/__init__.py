"""Cache-zero: the `cache-zero` item (`cache-zero[serverK]` under pytest -n) proving that every request of the
primary run ran cold, with no prefix-cache reuse (each response's cached-token count, the server's counters).

Its producer (producer.py, on the primary run's evidence shared with speculation in oracle/checks/per_server.py),
state (state.py), report section (oracle/report/evidence.py) and this descriptor, listed once in
oracle.checks.CHECKS. It has no option of its own (`--allow-inconclusive cache` is the gate's).
"""

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
