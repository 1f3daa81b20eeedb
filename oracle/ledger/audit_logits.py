"""The audit's rules for the items judged on figures the report stores rather than on records: logits (the suite's
item against --kld-max / --same-top1-min, each prompt's, the precision floor), decode vs prefill (against
--dvp-max-delta), chunked prefill, and the sampled-distribution check (its p-values and detectable shift against
--max-shift). Each verdict is re-derived from the stored figures by the function the gate judged it with, under the
bars the run recorded; the figures themselves cannot be measured again without the server (they are the lower-bound
statistics of teacher-forced requests): the bars a run writes twice (the seal's judged_under and the section's own
copy) must agree, and the suite's figures must be the positions-weighted mean of its prompts'.

    problem = logits_items(report, judged, derived)   # "logits: field verdict is 'pass', but ..." or None
    # derived: the ids whose verdicts were re-derived are added to it (the rest are named as outcome-checked only)
"""

from __future__ import annotations

import math

from oracle.compare.distribution import TESTS, distribution_verdict
from oracle.compare.verdicts import INFO, NOT_RUN, Check
from oracle.logits.chunked import chunked_check
from oracle.logits.decode_prefill import dvp_check
from oracle.logits.path import logits_check, suite_check

__all__ = ["logits_items"]

_ROUNDED = 1e-6  # the distribution check's figures are written rounded to 6 places


def _settings(judged: dict, check: str) -> dict:
    return (judged.get("checks") or {}).get(check) or {}


def _verdict(cid: str, stated, derived: str, source: str) -> str | None:
    if stated != derived:
        return f"{cid}: field verdict is {stated!r}, but {source} gives {derived!r}"
    return None


def _close(a, b) -> bool:
    return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9,
                                                                                         abs_tol=1e-12)


def _weighted(section: dict) -> str | None:
    """The suite's Mean KLD and Same top p are means over every compared position: its prompts' figures weighted
    by their positions give them again."""
    overall, prompts = section.get("overall") or {}, section.get("per_prompt") or {}
    rows = [s for s in prompts.values() if isinstance(s, dict) and s.get("positions")]
    total = sum(int(s["positions"]) for s in rows)
    if not rows or not overall.get("positions"):
        return None
    if overall["positions"] != total:
        return f"logits: field logits.overall.positions is {overall['positions']}, but its prompts hold {total}"
    for name in ("mean_kld", "same_top1"):
        try:
            mean = sum(float(s[name]) * int(s["positions"]) for s in rows) / total
        except (KeyError, TypeError, ValueError):
            return f"logits: field logits.per_prompt holds no {name} to check logits.overall.{name} against"
        if not _close(overall.get(name), mean):
            return (f"logits: field logits.overall.{name} is {overall.get(name)!r}, but its prompts' figures, "
                    f"weighted by their positions, give {mean!r}")
    return None


def _logits(row: dict, section: dict, judged: dict) -> str | None:
    cid, verdict = row.get("id"), row.get("verdict")
    if cid == "logits":
        bars = _settings(judged, "logits")
        recorded = section.get("thresholds") or {}
        for bar, copy in (("kld_max", "kld_max"), ("same_top1_min", "same_top1_min_percent")):
            if copy in recorded and recorded[copy] != bars.get(bar):
                return (f"logits: field logits.thresholds.{copy} is {recorded[copy]!r}, but the run was judged "
                        f"under {bar} {bars.get(bar)!r} (seal.judged_under)")
        problem = _weighted(section)
        if problem:
            return problem
        derived = suite_check(section, kld_max=bars.get("kld_max"), same_top1_min=bars.get("same_top1_min"))
        return _verdict(cid, verdict, derived.verdict, f"its figures (logits.overall) against the run's bars: "
                                                      f"{derived.detail[:160]}")
    if cid == "logits-floor":
        floor = section.get("floor") or {}
        derived = logits_check(cid, floor.get("overall") or {}, kld_max=None, same_top1_min=None, gating=False)
        return _verdict(cid, verdict, derived.verdict, "its figures (logits.floor.overall)")
    pid = str(cid)[len("logits["):-1]
    if pid in (section.get("errors") or {}):
        return _verdict(cid, verdict, NOT_RUN, f"logits.errors.{pid}")
    summary = (section.get("per_prompt") or {}).get(pid) or {}
    derived = logits_check(cid, summary, kld_max=None, same_top1_min=None, gating=False)
    return _verdict(cid, verdict, derived.verdict, f"its figures (logits.per_prompt.{pid})")


def _prefill(row: dict, report: dict, judged: dict) -> str | None:
    cid, verdict = row.get("id"), row.get("verdict")
    key = "decode_vs_prefill" if cid == "decode-vs-prefill" else "chunked_prefill"
    section = report.get(key) or {}
    if section.get("not_offered"):
        return _verdict(cid, verdict, INFO, f"{key}.not_offered")
    if cid == "decode-vs-prefill":
        bar = _settings(judged, "decode_vs_prefill").get("max_delta")
        if "tolerance_nats" in section and section["tolerance_nats"] != bar:
            return (f"{cid}: field decode_vs_prefill.tolerance_nats is {section['tolerance_nats']!r}, but the run "
                    f"was judged under max_delta {bar!r} (seal.judged_under)")
        derived: Check = dvp_check(section, max_delta=bar)
    else:
        derived = chunked_check(section)
    return _verdict(cid, verdict, derived.verdict, f"its figures ({key}.modes): {derived.detail[:160]}")


def _distribution(row: dict, report: dict, judged: dict) -> str | None:
    cid, verdict = row.get("id"), row.get("verdict")
    data = (report.get("sampling") or {}).get("distribution") or {}
    bar = _settings(judged, "sampling_distribution").get("max_shift")
    if data.get("max_shift") != bar:
        return (f"{cid}: field sampling.distribution.max_shift is {data.get('max_shift')!r}, but the run was judged "
                f"under max_shift {bar!r} (seal.judged_under)")
    try:
        p_ll, p_ranks, alpha = float(data["p_value_loglik"]), float(data["p_value_ranks"]), float(data["alpha"])
        detectable = math.inf if data["detectable_shift"] is None else float(data["detectable_shift"])
    except (KeyError, TypeError, ValueError):
        return f"{cid}: field sampling.distribution holds no p-values and detectable shift to re-derive it from"
    per_test = alpha / TESTS
    if min(abs(p_ll - per_test), abs(p_ranks - per_test), abs(detectable - float(bar))) <= _ROUNDED:
        return None  # a figure within its rounding of the bar: the stored figures cannot say either way
    derived = distribution_verdict(p_ll, p_ranks, detectable, max_shift=float(bar), alpha=alpha)
    if verdict != derived or data.get("verdict") != derived:
        stated = data.get("verdict") if verdict == derived else verdict
        field = "sampling.distribution.verdict" if verdict == derived else "verdict"
        return (f"{cid}: field {field} is {stated!r}, but its p-values ({p_ll:g}, {p_ranks:g} at {per_test:g} each)"
                f" and detectable shift ({detectable:g} against --max-shift {bar:g}) give {derived!r}")
    return None


def logits_items(report: dict, judged: dict, derived: set[str]) -> str | None:
    """The logits, decode-vs-prefill, chunked-prefill and sampling-distribution items against their stored figures;
    each id re-derived is added to `derived`."""
    section = report.get("logits") or {}
    for row in report.get("checks") or []:
        if not isinstance(row, dict) or row.get("verdict") == NOT_RUN:  # fails as stated: nothing believed
            continue
        cid = str(row.get("id"))
        if cid == "logits" or cid == "logits-floor" or (cid.startswith("logits[") and row.get("kind") == "logits"):
            if not section or (cid == "logits" and not section.get("overall")) or (
                    cid == "logits-floor" and not (section.get("floor") or {}).get("overall")):
                continue  # no figures stored: named as outcome-checked only
            problem = _guarded(_logits, cid, row, section, judged)
        elif cid in ("decode-vs-prefill", "chunked-prefill"):
            key = "decode_vs_prefill" if cid == "decode-vs-prefill" else "chunked_prefill"
            if not (report.get(key) or {}).get("modes") and not (report.get(key) or {}).get("not_offered"):
                continue
            problem = _guarded(_prefill, cid, row, report, judged)
        elif cid == "sampling-distribution":
            if not (report.get("sampling") or {}).get("distribution"):
                continue
            problem = _guarded(_distribution, cid, row, report, judged)
        else:
            continue
        if problem:
            return problem
        derived.add(cid)
    return None


def _guarded(rule, cid: str, *args) -> str | None:
    """A rule over figures of another shape than a run writes: named, never a traceback."""
    try:
        return rule(*args)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return f"{cid}: its stored figures are not what a run writes ({type(exc).__name__}: {exc}); its verdict " \
               "cannot be re-derived"
