"""The audit's rules for what a report states beside its prompts: each item's outcome follows from its verdict under
the options the run was judged under, the run's verdict from its outcomes, the summary's counts from the items, and
the evidence items (speed, cache, overlap, coverage, canaries) from the evidence stored beside them. Each rule returns
the first problem as one line naming the item and the field (None: it follows).

    problem = stated_items(report, judged_under)     # "tokens[p1]: outcome 'passed' ... gives 'failed'"
"""

from __future__ import annotations

from oracle.canary.rejudge import rejudge_canary
from oracle.canary.results import REPORT_KEY, canary_verdict
from oracle.canary.tokens import (CHECK_KIND, COMPLETIONS_KEY, NOT_COMPARED, TOKENS_KEY, compare_canary,
                                  tokens_check_id)
from oracle.compare.verdicts import (DIVERGENT, DROPPED, EXACT, INCONCLUSIVE, NEAR_TIE, NOT_RUN, PASS, Check,
                                     passed)
from oracle.speed.verdict import speed_verdict
from oracle.store.json_files import InputFileError
from oracle.store.records import PRIMARY, RecordKey
from oracle.store.reference import Reference

__all__ = ["canary_answers", "canary_items", "evidence_items", "stated_items"]


def _check(row: dict) -> Check | None:
    try:
        return Check(**row)
    except TypeError:
        return None


def stated_items(report: dict, judged: dict) -> str | None:
    """Outcomes from verdicts, the run's verdict from the outcomes, the summary's counts from the items."""
    checks = [c for c in report.get("checks") or [] if isinstance(c, dict)]
    for row in checks:
        check = _check(row)
        if check is None:
            return f"checks: {row.get('id')!r} is not an item oracle writes"
        if check.outcome is None:
            continue
        expected = "passed" if passed(check, allow_near_ties=bool(judged.get("allow_near_ties")),
                                      allow_inconclusive=tuple(judged.get("allow_inconclusive") or ()),
                                      allow_logprobs_moved=bool(judged.get("allow_logprobs_moved"))) else "failed"
        if check.outcome != expected:
            return (f"{check.id}: field outcome is {check.outcome!r}, but its verdict {check.verdict!r} under the "
                    f"run's options gives {expected!r}")
    finished = report.get("complete") and report.get("closed") and not report.get("interruption")
    expected = ("pass" if all(c.get("outcome") == "passed" for c in checks) else "fail") if finished else "partial"
    if report.get("verdict") != expected:
        failing = next((c["id"] for c in checks if c.get("outcome") != "passed"), None)
        why = f" ({failing} did not pass)" if failing and expected == "fail" else ""
        return f"verdict: field verdict is {report.get('verdict')!r}, but its items give {expected!r}{why}"
    return _summary(report, checks)


def _summary(report: dict, checks: list[dict]) -> str | None:
    summary = report.get("summary") or {}
    tokens = [c for c in checks if c.get("kind") == "tokens"]
    counts = {"near_tie": sum(c.get("verdict") == NEAR_TIE for c in tokens),
              "divergent": sum(c.get("verdict") == DIVERGENT for c in tokens),
              "inconclusive": sum(c.get("verdict") == INCONCLUSIVE for c in checks)}
    exact = summary.get("exact")
    if isinstance(exact, list) and exact and exact[0] != sum(c.get("verdict") == EXACT for c in tokens):
        return (f"summary: field exact is {exact}, but {sum(c.get('verdict') == EXACT for c in tokens)} prompt "
                "item(s) are exact")
    for key, n in counts.items():
        if key in summary and summary[key] != n:
            return f"summary: field {key} is {summary[key]}, but the items hold {n}"
    passed_n = [sum(c.get("outcome") == "passed" for c in checks), len(checks)]
    if "checks_passed" in summary and list(summary["checks_passed"] or []) != passed_n:
        return f"summary: field checks_passed is {summary['checks_passed']}, but the items give {passed_n}"
    return None


def evidence_items(report: dict, judged: dict, derived: set[str] | None = None) -> str | None:
    """Speed, cache, overlap and coverage items against the evidence the report stores beside them; the ids whose
    verdict that evidence gives are added to `derived`."""
    derived = set() if derived is None else derived
    for row in report.get("checks") or []:
        if not isinstance(row, dict) or row.get("verdict") == NOT_RUN:
            continue
        cid, verdict, evidence = row.get("id", ""), row.get("verdict"), row.get("evidence") or {}
        problem = None
        speed = (judged.get("checks") or {}).get("speed") or {}
        if row.get("kind") == "speed" and cid == "speed" and speed.get("min_speedup") is not None:
            bar = float(speed["min_speedup"])
            try:
                derived_speed = speed_verdict(report.get("speed") or {}, bar,
                                              float(speed.get("noise_floor") or 0.0))[0]
            except (KeyError, TypeError, ValueError, ZeroDivisionError):  # a card no run writes
                return f"{cid}: field verdict is {verdict!r}, but its card (speed.vs_reference) cannot be judged"
            if derived_speed != verdict:
                problem = (f"{cid}: field verdict is {verdict!r}, but the speed card's comparison (speed.vs_reference:"
                           f" median, ci95) against --min-speedup {bar:g} gives {derived_speed!r}")
            derived.add(cid)
        elif row.get("kind") == "cache" and verdict == PASS:
            problem = _cache(cid, evidence)
            if "cached_requests" in evidence or "counter_deltas" in evidence:
                derived.add(cid)
        elif row.get("kind") == "ladder" and verdict not in (DIVERGENT, INCONCLUSIVE):
            overlap = evidence.get("overlap") or {}
            if isinstance(overlap.get("reached"), int) and overlap["reached"] < (overlap.get("asked") or 0):
                problem = (f"{cid}: field verdict is {verdict!r}, but its evidence.overlap reached "
                           f"{overlap['reached']} of {overlap.get('asked')} (unproven overlap is inconclusive)")
        elif row.get("kind") == "record" and verdict == PASS and str(cid).startswith("record["):
            finished = (report.get("records") or {}).get("finished") or {}
            if str(RecordKey(str(cid)[len("record["):-1], PRIMARY)) not in finished:
                problem = f"{cid}: field verdict is 'pass', but the report holds no record of it (records.finished)"
            derived.add(cid)
        elif row.get("kind") == "coverage" and verdict == PASS:
            missing = [name for name, where in (evidence.get("held_in") or {}).items() if not where]
            if missing:
                problem = f"{cid}: field verdict is 'pass', but evidence.held_in shows {missing[0]} in no run"
            if evidence.get("held_in"):
                derived.add(cid)
        if problem:
            return problem
    return None


def _cache(cid: str, evidence: dict) -> str | None:
    cached = evidence.get("cached_requests") or {}
    if cached:
        return (f"{cid}: field verdict is 'pass', but evidence.cached_requests lists {len(cached)} request(s) that "
                "reused the prefix cache")
    moved = {k: v for k, v in (evidence.get("counter_deltas") or {}).items()
             if k in ("prompt_tokens_cached", "prefix_cache_hits") and isinstance(v, (int, float)) and v > 0}
    if moved:
        name = next(iter(moved))
        return f"{cid}: field verdict is 'pass', but evidence.counter_deltas.{name} moved by {moved[name]:g}"
    return None


def canary_answers(report: dict, judged: dict) -> str | None:
    """Each canary's `ok` and its answer's fields re-derived from the answer the report keeps, by the family's rule
    the canary tests judge it by (canary/rejudge.py): needs no reference."""
    completions = report.get(COMPLETIONS_KEY) or {}
    for item_id, row in (report.get(REPORT_KEY) or {}).items():
        if not isinstance(row, dict) or row.get("verdict") in (NOT_RUN, DROPPED) or "ok" not in row:
            continue
        completion = completions.get(item_id) if isinstance(completions, dict) else None
        try:
            problem = rejudge_canary(str(item_id), row, completion if isinstance(completion, dict) else None,
                                     report, judged, (row.get("reference") if isinstance(row.get("reference"), dict)
                                                      else None))
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:  # not what a run writes
            problem = f"canaries.{item_id}: its answer is not what a run keeps ({type(exc).__name__}: {exc})"
        if problem:
            return problem
    return None


def canary_items(report: dict, judged: dict, reference: Reference | None,
                 derived: set[str] | None = None) -> str | None:
    """Each canary's verdict from its answer (`ok`) against the reference's answer (None: no reference, as a record
    run judges it), by the gate's own rule; with a reference that keeps canary completions, each canary's completion
    compared token for token with the reference's again (canary/tokens.py), its verdict and split."""
    rows = report.get(REPORT_KEY) or {}
    completions = report.get(COMPLETIONS_KEY) or {}
    reference_canaries = None if reference is None else dict(reference.manifest.get("canaries") or {})
    seen = set() if derived is None else derived
    items = {c.get("id"): c for c in report.get("checks") or [] if isinstance(c, dict)
             and c.get("kind") in ("canary", CHECK_KIND)}
    for item_id, row in rows.items():
        if not isinstance(row, dict) or row.get("verdict") in (NOT_RUN, DROPPED) or "ok" not in row:
            continue
        if row.get("family") == "crosstalk":  # judged by its own proof (canaries/test_crosstalk.py): ok iff pass
            if bool(row["ok"]) != (row.get("verdict") == PASS):
                return f"canaries.{item_id}: field verdict is {row.get('verdict')!r}, but its field ok is {row['ok']}"
            continue  # its ok is the proof's own outcome: named as outcome-checked only
        strict = (row.get("family") == "code-fresh"  # a stale code set fails always (test_code_result.py)
                  or bool(((judged.get("checks") or {}).get("canaries") or {}).get("strict")))
        follows, _ = canary_verdict(ok=bool(row["ok"]), item_id=item_id, reference=reference_canaries, strict=strict)
        if row.get("verdict") != follows:
            return (f"canaries.{item_id}: field verdict is {row.get('verdict')!r}, but its answer (ok "
                    f"{row['ok']}) against the reference gives {follows!r}")
        item = items.get(item_id)
        if item is not None and item.get("verdict") != follows:
            return f"{item_id}: field verdict is {item.get('verdict')!r}, but its canary row gives {follows!r}"
        seen.add(str(item_id))
        if reference is not None:
            completion = completions.get(item_id) if isinstance(completions, dict) else None
            try:
                problem = _canary_tokens(str(item_id), row, completion, reference, judged, items)
            except (InputFileError, KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                problem = f"canaries.{item_id}: its completion cannot be compared with the reference's ({exc})"
            if problem:
                return problem
            seen.add(tokens_check_id(str(item_id)))
        problem = _copies(str(item_id), row, item, items.get(tokens_check_id(str(item_id))),
                          None if reference_canaries is None else reference_canaries.get(item_id))
        if problem:
            return problem
    return None


def _copies(item_id: str, row: dict, item: dict | None, tokens_item: dict | None, ref_row) -> str | None:
    """What a run writes twice agrees: the item's evidence is its row (less its text), the `:tokens` item's is the
    row's comparison, and the row's copy of the reference's answer is the reference's."""
    if item is not None:
        kept = {k: v for k, v in row.items() if k != "raw_text"}
        evidence = item.get("evidence") or {}
        for name in sorted(set(kept) | set(evidence)):
            if kept.get(name) != evidence.get(name):
                return (f"{item_id}: field evidence.{name} is {evidence.get(name)!r}, but its canary row says "
                        f"{kept.get(name)!r}")
    if tokens_item is not None and (tokens_item.get("evidence") or {}) != (row.get(TOKENS_KEY) or {}):
        return (f"{tokens_check_id(item_id)}: field evidence is not its canary row's {TOKENS_KEY} "
                f"({(tokens_item.get('evidence') or {}).get('verdict')!r} against "
                f"{(row.get(TOKENS_KEY) or {}).get('verdict')!r})")
    copy = row.get("reference")
    if isinstance(ref_row, dict) and isinstance(copy, dict):
        for name, value in copy.items():
            if ref_row.get(name) != value:
                return (f"canaries.{item_id}: field reference.{name} is {value!r}, but the reference's row says "
                        f"{ref_row.get(name)!r}")
    return None


def _canary_tokens(item_id: str, row: dict, completion, reference: Reference, judged: dict,
                   items: dict) -> str | None:
    """The canary's completion against the reference's again: the row's `tokens_vs_reference` and its item."""
    stated = row.get(TOKENS_KEY)
    if not isinstance(completion, dict):
        if stated is not None and (stated or {}).get("verdict") != NOT_COMPARED:
            return (f"canaries.{item_id}: field {TOKENS_KEY}.verdict is {(stated or {}).get('verdict')!r}, but the "
                    f"report keeps no completion of it ({COMPLETIONS_KEY}) to compare with the reference's")
        return None
    try:
        found = compare_canary(item_id, row, completion, reference,
                               near_tie_nats=float(judged.get("near_tie_nats", 0.5)))
    except (InputFileError, KeyError, TypeError, ValueError) as exc:
        return f"canaries.{item_id}: its completion cannot be compared with the reference's ({exc})"
    if found.row is None:
        return None
    said = f"its completion against the reference's ({reference.path})"
    stated = stated if isinstance(stated, dict) else {}
    for name in ("verdict", "first_divergence"):
        if (name in stated or name == "verdict") and stated.get(name) != found.row.get(name):
            return (f"canaries.{item_id}: field {TOKENS_KEY}.{name} is {stated.get(name)!r}, but {said} gives "
                    f"{found.row.get(name)!r}")
    item = items.get(tokens_check_id(item_id))
    if found.check is not None and item is not None and item.get("verdict") != found.check.verdict:
        return (f"{tokens_check_id(item_id)}: field verdict is {item.get('verdict')!r}, but {said} gives "
                f"{found.check.verdict!r}")
    if found.row.get("verdict") == EXACT:  # the same token ids: the same text as the reference's own
        recorded = reference.side_record(REPORT_KEY, item_id)
        if recorded is not None and recorded.text is not None and completion.get("text") != recorded.text:
            return (f"{COMPLETIONS_KEY}.{item_id}: field text is {completion.get('text')!r}, but its token ids are "
                    f"the reference's, whose text is {recorded.text!r}")
    return None
