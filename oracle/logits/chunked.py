"""Chunked-prefill invariance: the same path scored as a prompt in chunks of C tokens against one pass, as the
field's check ("prompt processing in chunks gives the same top-1 token as one pass at every tested length").
Pure: the scored rows in, figures and the `chunked-prefill` check out, never asserts.

    report = chunked_report(dvp_report, scored)   # scored: mode -> prompt -> (tokens, top ids, top logprobs)
    check = chunked_check(report)                 # FAIL at the first prefix length whose top-1 differs

Row i of a path is the distribution after prompt + completion[:i], so the tested prefix lengths are P + 1 .. P + n - 1
(P the prompt's tokens, n the completion's; position 0 is left out as in decode vs prefill).
"""

from __future__ import annotations

from oracle.compare.verdicts import FAIL, NOT_RUN, PASS, Check
from oracle.logits.decode_prefill import ONE_PASS, compare_rows, summarize_rows

__all__ = ["DEFINITION", "chunked_check", "chunked_report"]

DEFINITION = ("each chunk size's top-k at every tested prefix length of the candidate's own paths against one "
              "prefill pass of the same path: top-1 equal at every length, the largest |Δlogprob| over the top-k ids "
              "both hold, bit-identical positions")


def _top1(ids) -> int | None:
    return int(ids[0]) if len(ids) else None


def chunked_report(dvp_report: dict, scored: dict[str, dict[str, tuple]]) -> dict:
    """Each chunk mode of the scored modes against the one pass (`scored[ONE_PASS]`)."""
    one = scored.get(ONE_PASS, {})
    modes: dict[str, dict] = {}
    for name, mode in (dvp_report.get("modes") or {}).items():
        if name == ONE_PASS:
            continue
        if mode.get("not_offered") or mode.get("not_reached"):
            modes[name] = {k: mode[k] for k in ("chunk", "not_offered", "not_reached") if k in mode}
            continue
        rows, splits = {}, []
        for pid, (tokens, ids, lps) in scored.get(name, {}).items():
            if pid not in one:
                continue
            _, one_ids, one_lps = one[pid]
            rows[pid] = compare_rows(tokens, one_ids, one_lps, ids, lps)
            for i in range(1, min(len(ids), len(one_ids))):
                if ids[i] and one_ids[i] and _top1(ids[i]) != _top1(one_ids[i]):
                    splits.append({"prompt": pid, "position": i, "one_pass": _top1(one_ids[i]),
                                   "chunked": _top1(ids[i])})
        figures = summarize_rows(rows)
        modes[name] = {"chunk": mode.get("chunk"), **figures, "top1_differs": splits,
                       "longest_prefix_tokens": mode.get("longest_prefix_tokens"),
                       "errors": mode.get("errors") or {}}
    return {"definition": DEFINITION, "top_k": dvp_report.get("top_k"), "modes": modes}


def _ladder_lines(ladder: dict) -> tuple[list[str], list[str], int]:
    """(lines, failures, lengths compared) of the long prompt's ladder (logits/prefill_ladder.py)."""
    lines, broken, compared = [], [], 0
    if ladder.get("beyond_context"):
        lines.append(f"ladder: {', '.join(map(str, ladder['beyond_context']))} tokens beyond the context of "
                     f"{ladder['context']}: not tested")
    for name, mode in (ladder.get("modes") or {}).items():
        n, differs = mode["tested"], mode["top1_differs"]
        compared += n
        if not n:
            lines.append(f"{name} ladder: no length longer than one chunk of {mode['chunk']} tokens")
            continue
        top = max(r["tokens"] for r in mode["lengths"])
        delta = "-" if mode["max_abs_delta"] is None else f"{mode['max_abs_delta']:.3g}"
        lines.append(f"{name} ladder: top-1 equal at {n - len(differs)}/{n} prompt lengths (up to {top} tokens), "
                     f"max |Δlogprob| {delta} nats, bit-identical at {mode['bit_identical']}/{n}")
        if differs:
            row = next(r for r in mode["lengths"] if r["tokens"] == differs[0])
            broken.append(f"{name}: top-1 differs from one pass at {len(differs)} ladder length(s), first "
                          f"{differs[0]} tokens (one pass {row['one_pass_top1']}, chunked {row['chunked_top1']})")
    lines += [f"{name} ladder: not compared: {err}" for name, err in (ladder.get("errors") or {}).items()]
    return lines, broken, compared


def chunked_check(report: dict) -> Check:
    """FAIL when a chunk size changed a top-1 token (naming prompt, position and both tokens); PASS when every
    compared length kept it; NOT_RUN when no chunk size could be compared."""
    cid, lines, broken, compared, errors = "chunked-prefill", [], [], 0, 0
    for name, mode in report["modes"].items():
        if mode.get("not_offered") or mode.get("not_reached"):
            lines.append(f"{name}: not {'offered' if mode.get('not_offered') else 'reached'}: "
                         f"{mode.get('not_offered') or mode.get('not_reached')}")
            continue
        o = mode["overall"]
        compared += o["positions"]
        lines.append(f"{name}: top-1 equal at {o['positions'] - len(mode['top1_differs'])}/{o['positions']} prefix "
                     f"lengths (up to {mode['longest_prefix_tokens']} tokens), max |Δlogprob| "
                     f"{o['max_abs_delta']:.3g} nats, bit-identical at {o['bit_identical']}/{o['positions']}")
        lines += [f"{name} {pid}: not compared: {err}" for pid, err in mode["errors"].items()]
        errors += len(mode["errors"])
        if mode["top1_differs"]:
            s = mode["top1_differs"][0]
            broken.append(f"{name}: top-1 differs from one pass at {len(mode['top1_differs'])} length(s), first "
                          f"{s['prompt']} position {s['position']} (one pass {s['one_pass']}, chunked {s['chunked']})")
    ladder = report.get("ladder")
    if ladder:
        said, failed, tested = _ladder_lines(ladder)
        lines, broken, compared = lines + said, broken + failed, compared + tested
        errors += len(ladder.get("errors") or {})
    evidence = {"modes": {n: m.get("overall") or {k: m.get(k) for k in ("not_offered", "not_reached")}
                          for n, m in report["modes"].items()},
                "ladder": {n: {k: m[k] for k in ("tested", "top1_differs", "max_abs_delta")}
                           for n, m in ((ladder or {}).get("modes") or {}).items()}}
    if broken:
        return Check(cid, "logits", FAIL, "; ".join(broken), lines, evidence)
    if errors:
        return Check(cid, "logits", NOT_RUN, f"{errors} prompt(s) not compared: " + "; ".join(lines), lines, evidence)
    if not compared:
        why = "; ".join(lines) or "no chunk size given (--prefill-chunks)"
        return Check(cid, "logits", NOT_RUN, f"no prefix length compared: {why}", lines, evidence)
    return Check(cid, "logits", PASS, "; ".join(line for line in lines if "not compared" not in line), lines,
                 evidence)
