"""Cache-zero and speculation evidence: per-request fields and server counter deltas in, a Check out.

cache-zero: every request shows zero cached prompt tokens AND the server's prefix-cache
counters did not move across the gated requests. Missing evidence is `inconclusive`.
"""

from __future__ import annotations

from typing import Sequence

from oracle.backends import CacheEvidence, Counters
from oracle.store.records import Record
from oracle.compare.verdicts import FAIL, INCONCLUSIVE, PASS, Check

__all__ = ["cache_zero_check", "speculation_check", "speculation_summary", "speculation_totals"]


def cache_zero_check(records: Sequence[Record], delta: Counters | None, *, cache: CacheEvidence,
                     check_id: str = "cache-zero") -> Check:
    """cache: the family's declared cache evidence. With `counters_suffice`, a server whose per-request field
    is optional (vLLM) is proven by its counters alone when no request carries the field; the detail says so."""
    counters_hint, per_request_hint, counters_suffice = cache.counters_hint, cache.per_request_hint, cache.counters_suffice
    per_request = [r for r in records if r.cached_prompt_tokens is not None]
    cached = [r for r in per_request if r.cached_prompt_tokens > 0]
    moved = {}
    counters_seen = False
    if delta is not None:
        for name in ("prompt_tokens_cached", "prefix_cache_hits"):
            value = getattr(delta, name)
            if value is not None:
                counters_seen = True
                if value > 0:
                    moved[name] = value
    evidence = {
        "requests_with_cache_field": len(per_request),
        "requests": len(records),
        "cached_requests": {str(r.report_key): r.cached_prompt_tokens for r in cached},
        "counter_deltas": delta.as_dict() if delta is not None else None,
    }
    if cached or moved:
        lines = [f"request {r.id} ({r.condition.key}) reused {r.cached_prompt_tokens} cached prompt tokens"
                 for r in cached[:10]]
        lines += [f"server counter {k} moved by {v:g} during the gated requests" for k, v in moved.items()]
        return Check(check_id, "cache", FAIL, f"prefix cache was reused: {len(cached)} request(s), "
                     f"{len(moved)} counter(s) moved", lines, evidence)
    missing = []
    fallback = counters_suffice and counters_seen and records and not per_request
    if not fallback and (not records or len(per_request) < len(records)):
        missing.append("per-request cached-token counts")
    if not counters_seen:
        missing.append(f"server prefix-cache counters ({counters_hint})")
    if missing:
        hints = [counters_hint] if not counters_seen else []
        if per_request_hint and len(per_request) < len(records):
            hints.append(per_request_hint)
        return Check(check_id, "cache", INCONCLUSIVE, "cache-zero not proven: no " + " and no ".join(missing),
                     [f"to prove it: {h}" for h in hints or [counters_hint]], evidence)
    if fallback:
        evidence["per_request"] = "absent"
        return Check(check_id, "cache", PASS, f"prefix-cache counters did not move across {len(records)} requests "
                     "(no per-request cached_tokens: proven from the counters alone)",
                     [f"for per-request proof too: {per_request_hint}"] if per_request_hint else [], evidence)
    return Check(check_id, "cache", PASS, f"0 cached prompt tokens in {len(records)} requests; "
                 "prefix-cache counters did not move", [], evidence)


def speculation_summary(records: Sequence[Record], delta: Counters | None) -> dict:
    """Drafted / accepted per request and in total, from the records, else from the counters."""
    # llama-server leaves draft counts out of a request that drafted nothing: once any request has them,
    # the others drafted 0 (listed, so the table has every request).
    speculating = any(r.drafted is not None for r in records)
    per_request = {str(r.report_key): {"drafted": r.drafted or 0, "accepted": r.accepted or 0}
                   for r in records} if speculating else {}
    drafted = sum(v["drafted"] for v in per_request.values()) if per_request else None
    accepted = sum(v["accepted"] for v in per_request.values()) if per_request else None
    source = "per-request timings" if per_request else None
    drafts = None
    if delta is not None and delta.draft_tokens is not None:
        if drafted is None:
            drafted, accepted, source = delta.draft_tokens, delta.accepted_tokens or 0, "server counters"
        drafts = delta.drafts
    out = {"drafted": drafted, "accepted": accepted, "source": source, "per_request": per_request}
    if delta is not None and delta.accepted_per_position:
        out["accepted_per_position"] = list(delta.accepted_per_position)  # vLLM: accepted at draft position 0, 1, ...
    totals = speculation_totals(drafted=drafted, accepted=accepted, drafts=drafts)
    return out | {k: v for k, v in totals.items() if k not in ("drafted", "accepted")}


def speculation_totals(*, drafted, accepted, drafts) -> dict:
    """The acceptance rate and the mean accepted length per draft, where the counts allow them."""
    out = {"drafted": drafted, "accepted": accepted}
    if drafted:
        out["rate"] = accepted / drafted
    if drafts:
        out["drafts"] = drafts
        out["mean_accepted_length"] = (accepted or 0) / drafts
    return out


def speculation_check(summary: dict, *, check_id: str = "speculation") -> Check:
    drafted, accepted = summary.get("drafted"), summary.get("accepted")
    if drafted is None:
        return Check(check_id, "speculation", INCONCLUSIVE,
                     "speculation not proven: the server reported no draft counters",
                     ["start the server with speculation and --metrics, or drop --speculative"], summary)
    if not drafted or not accepted:
        return Check(check_id, "speculation", INCONCLUSIVE,
                     f"speculation not proven: drafted {drafted:g}, accepted {accepted or 0:g}; "
                     "the speculative path never ran on these prompts", [], summary)
    return Check(check_id, "speculation", PASS,
                 f"drafted {drafted:g}, accepted {accepted:g} (rate {summary['rate']:.1%})", [], summary)
