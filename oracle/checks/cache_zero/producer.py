"""The cache-zero check's producer: the `cache-zero` item (one per server under pytest -n) proving that no request
of the primary run reused another's prefix cache, from each response's cached-token count and the server's
prefix-cache counters around the run.

    checks = CacheZeroChecks(plan, recorder, prompts, state); checks.observe(result)   # keeps the primary run
    checks.cache_check().check.verdict     # "pass", "fail" (reused) or "inconclusive" (not proven)
"""

from __future__ import annotations

from oracle.checks.descriptor import Finding, not_run
from oracle.checks.per_server import PrimaryEvidence
from oracle.compare.evidence import cache_zero_check
from oracle.compare.verdicts import PASS, Check

__all__ = ["CacheZeroChecks"]


class CacheZeroChecks(PrimaryEvidence):
    def __init__(self, plan, recorder, prompts, state) -> None:
        super().__init__(plan, prompts, state)
        self.recorder = recorder

    def cache_check(self, server: int | None = None) -> Finding:
        cid = self.item_id("cache-zero", server)
        if not self.state.complete:
            return not_run(self.state, cid, "cache")
        if (idle := self.idle(cid, "cache", server)) is not None:
            return idle
        records, backend = self.result.records, self.recorder.backend
        if backend.capabilities.in_process:
            check = Check(cid, "cache", PASS, f"in-process backend: no server and no cache shared between "
                          f"requests; each of the {len(records)} requests ran with a fresh KV cache",
                          [], {"requests": len(records), "in_process": True})
        else:
            check = cache_zero_check(records, self.result.counters_delta, check_id=cid,
                                     cache=backend.capabilities.cache)
        return Finding(check, {"cache": check.evidence | {"verdict": check.verdict}})
