"""What the primary run's evidence checks (cache-zero, speculation) share: one item per server under pytest -n,
each proving its own server's run, and the primary run each keeps to judge.

    items = server_items(plan, "cache-zero", "cache_zero")   # cache-zero, or cache-zero[server1], ...
    evidence = PrimaryEvidence(plan, prompts, state); evidence.observe(result)   # keeps the primary run
"""

from __future__ import annotations

from oracle.checks.descriptor import CheckItem, Finding
from oracle.compare.verdicts import INFO, Check
from oracle.run.runner import RunResult
from oracle.store.records import PRIMARY

__all__ = ["PrimaryEvidence", "server_items", "server_label"]


def server_label(index: int) -> str:
    """server1, server2, ... for worker gw0, gw1, ..."""
    return f"server{index + 1}"


def server_items(plan, name: str, kind: str) -> list[CheckItem]:
    """One item, or under pytest -n one per server, pinned to that server's worker (it proves that run)."""
    servers = plan.options.workers
    if servers == 1:
        return [CheckItem(name, kind)]
    return [CheckItem(f"{name}[{server_label(s)}]", kind, s, placed="server") for s in range(servers)]


class PrimaryEvidence:
    """A check judged from the primary run (boot 1, c1) of its own server, which it keeps as it ends."""

    def __init__(self, plan, prompts, state) -> None:
        self.plan, self.prompts, self.state = plan, prompts, state
        self.result: RunResult | None = None

    def observe(self, result: RunResult, **run) -> dict:
        """Keep the primary run (every later condition is another check's); the report's findings of it."""
        if result.condition != PRIMARY:
            return {}
        self.result = result
        return self.findings(result)

    def findings(self, result: RunResult) -> dict:
        return {}

    @staticmethod
    def item_id(name: str, server: int | None) -> str:
        return name if server is None else f"{name}[{server_label(server)}]"

    def idle(self, cid: str, kind: str, server: int | None) -> Finding | None:
        """Under pytest -n, a server whose worker owned no prompt ran none at c1: nothing to prove."""
        if self.result is not None and not self.result.records and server is not None:
            return Finding(Check(cid, kind, INFO, f"{server_label(server)} ran no prompt at c1: "
                                 f"{len(self.prompts.rendered)} prompt(s) for {self.plan.options.workers} workers"))
        return None
