"""sweep.json, sweep.md and sweep.html: per point its gate's figures, the classes, and the promotion answer on top;
every write atomic and public (`store.records.atomic_write_text`), rewritten after every point.

    data = sweep_json(..., points=[point_json(point, ...), ...], code=None)
    data["answer"]     # 'promote point 2 (-ctk f16, -t 2): ...' or 'none: ...'
    write_report(folder, data)

Per point: exact N/M with its Wilson 95% interval, near-ties, divergent, contaminated, acceptance and mean
accepted length (when the server drafted), the decode median (the conventional rate, 99 / (t100 - t1), where the
run has >= 101 tokens a prompt; else the after-TTFT rate, so named) with its ratio against the reference (the
speed card's paired ratio and bootstrap interval when it has one; else the two medians' ratio, no interval).
The promotion answer needs the gate's own between-run speed verdict: a point is promoted only when its outputs equal
the reference AND its interleaved comparison with the reference config (`--reference-launch recorded`) is faster
beyond the noise band (`speed/noise.py`); "identical, not faster: keep the reference" when every identical point was
judged and none is; "identical, speed not judged" when one was not (no interleave, or not a headline). Exit 0 only
for a promotion.
"""

from __future__ import annotations

import json
from pathlib import Path

from oracle.compare.confidence import count_json, count_words
from oracle.store.records import atomic_write_text
from oracle.sweep.classes import Signature, equals_reference, token_classes
from oracle.sweep.grid import Axis, Point
from oracle.sweep.pages import markdown, render_html
from oracle.speed.interleave import BETWEEN_RUN
from oracle.speed.noise import judge, noise_band, ratio_words
from oracle.speed.sequential import verdict_words
from oracle.speed.validity import HEADLINE

__all__ = ["FASTER", "KEEP", "NOT_FASTER", "NOT_JUDGED", "PROMOTE", "judged_faster", "point_json", "promotion",
           "sweep_json", "write_report"]

SCHEMA_VERSION = 1
PROMOTED, NONE, PARTIAL = 0, 1, 2
FASTER, NOT_FASTER, NOT_JUDGED = "faster", "not faster", "not judged"  # a point's speed against the reference config
PROMOTE, KEEP = "promote", "keep the reference"  # the decision (or NOT_JUDGED)
_FIGURES = ("conventional_tok_s", "after_ttft_tok_s")


def _speed(identity: dict) -> dict | None:
    card = identity.get("speed") or {}
    summary, ref = card.get("summary") or {}, ((card.get("reference") or {}).get("summary") or {})
    figure = next((f for f in _FIGURES if (summary.get(f) or {}).get("median") is not None), None)
    if figure is None:
        return None
    median = summary[figure]["median"]
    vs = card.get("vs_reference") or {}
    ref_median = (ref.get(figure) or {}).get("median")
    if vs.get("interval") == BETWEEN_RUN and vs.get("median") is not None:
        ratio, ci95 = vs["median"], vs.get("ci95")
        how = f"interleaved with the reference config, {vs.get('rounds')} rounds, between-run ({vs.get('label')})"
    elif figure == "conventional_tok_s" and vs.get("median") is not None:
        ratio, ci95, how = vs["median"], vs.get("ci95"), f"paired per-prompt ratio ({vs.get('label')})"
    else:
        ratio = round(median / ref_median, 4) if ref_median else None
        ci95, how = None, "ratio of the two medians, no interval"
    return {"figure": figure, "median": median, "prompts": summary[figure].get("prompts"), "label": card.get("label"),
            "reference_median": ref_median, "ratio": ratio, "ci95": ci95, "ratio_how": how,
            "launch": vs.get("launch"), **judged_faster(vs)}


def judged_faster(vs: dict) -> dict:
    """Is the point faster than the reference config? Only an interleaved between-run comparison that is a headline
    answers (`faster`: pass, `not faster`: fail or inconclusive, within the noise band); anything else is `not
    judged`, with why (a recorded reference was measured in another run: its interval misses the drift)."""
    if vs.get("interval") != BETWEEN_RUN:
        return {"judged": NOT_JUDGED, "judged_why": "no interleaved comparison with the reference config (add "
                                                    "--reference-launch recorded)"}
    if vs.get("label") != HEADLINE or vs.get("median") is None:
        why = (vs.get("reasons") or ["no interval"])[0]
        return {"judged": NOT_JUDGED, "judged_why": f"the interleaved comparison is {vs.get('label')}: {why}"}
    band = vs.get("noise") or noise_band(None)
    seq = vs.get("sequential")
    if seq and seq.get("bar") == 1.0:  # the session's own sequential test at 1.0 decided it (or reached its cap)
        return {"judged": FASTER if seq["decision"] == "pass" else NOT_FASTER, "judged_why": verdict_words(seq),
                "noise": band}
    verdict, why = judge(vs, bar=1.0, band=band)
    return {"judged": FASTER if verdict == "pass" else NOT_FASTER, "judged_why": why, "noise": band}


def _speculation(identity: dict) -> dict | None:
    spec = identity.get("speculation") or {}
    if not spec.get("drafted"):
        return None
    return {"drafted": spec.get("drafted"), "accepted": spec.get("accepted"), "acceptance": spec.get("rate"),
            "mean_accepted_length": spec.get("mean_accepted_length")}


def point_json(point: Point, *, status: str, folder: str | None, command: str, exit_code: int | None, wall_s: float,
               why: str, identity: dict, sig: Signature, reference: Signature) -> dict:
    """One point as sweep.json holds it; its figures from its gate's identity.json, its tokens from its records."""
    summary = identity.get("summary") or {}
    exact = summary.get("exact")
    return {"index": point.index, "label": point.label, "folder": folder, "status": status, "why": why,
            "exit_code": exit_code, "wall_s": wall_s, "command": command,
            "settings": [{"kind": s.kind, "name": s.name, "value": s.shown_value, "label": s.label}
                         for s in point.settings],
            "verdict": identity.get("verdict"), "complete": identity.get("complete"),
            "exact": count_json(*exact) if exact else None, "near_tie": summary.get("near_tie"),
            "divergent": summary.get("divergent"), "contaminated": summary.get("contaminated"),
            "speculation": _speculation(identity), "speed": _speed(identity) if status == "finished" else None,
            "prompts": len(sig), "equals_reference": equals_reference(sig, reference) if sig else None,
            "class": None, "_sig": sig}


def promotion(points: list[dict]) -> dict | None:
    """The decision over the finished points whose outputs equal the reference: `promote` the fastest of those
    judged faster than the reference config (interleaved, between-run, beyond the noise band); `keep the reference`
    when every such point was judged and none is faster; `not judged` when some were not; None when no point's
    outputs equal the reference."""
    equal = [p for p in points if p["status"] == "finished" and p["equals_reference"]]
    if not equal:
        return None
    speeds = [p["speed"] or {"judged": NOT_JUDGED, "judged_why": "no decode figure"} for p in equal]
    faster = [p for p, s in zip(equal, speeds) if s["judged"] == FASTER]
    unjudged = [(p, s) for p, s in zip(equal, speeds) if s["judged"] == NOT_JUDGED]
    out = {"equal": len(equal), "equal_points": [p["index"] for p in equal]}
    if faster:
        best = max(faster, key=lambda p: (p["speed"]["ratio"], -p["index"]))
        return {**out, "decision": PROMOTE, "point": best["index"], "label": best["label"], "folder": best["folder"],
                "speed": best["speed"], "faster": len(faster)}
    if unjudged:
        return {**out, "decision": NOT_JUDGED, "point": None, "why": unjudged[0][1]["judged_why"],
                "not_judged": [p["index"] for p, _ in unjudged]}
    return {**out, "decision": KEEP, "point": None}


def _speed_words(s: dict) -> str:
    ci = f" [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}]" if s.get("ci95") else ""
    return f"{ratio_words(s['ratio'])}{ci} ({s['ratio_how']})" if s.get("ratio") else "no ratio"


def _answer(data: dict, best: dict | None) -> str:
    points = data["points"]
    if data["status"] == "running":
        return "running: no answer yet"
    if data["exit_code"] == 4:
        bad = next((p for p in points if p["status"] == "usage"), None)
        last = next(iter(reversed((bad or {}).get("why", "").splitlines())), "see its log")
        return f"stopped: point {bad['index']}'s gate refused its options (exit 4): {last}" if bad else "stopped"
    done = sum(p["status"] == "finished" for p in points)
    prefix = f"partial ({done} of {len(points)} points finished): " if data["status"] == "partial" else ""
    if best is None:
        return prefix + ("none: no finished point's outputs equal the reference" if done else
                         "none: no point finished")
    by = {p["index"]: p for p in points}
    equal = ", ".join(f"{k} ({by[k]['label']})" for k in best["equal_points"])
    if best["decision"] == KEEP:
        said = "; ".join(f"point {k}: {_speed_words(by[k]['speed'])}" for k in best["equal_points"])
        return prefix + f"identical, not faster: keep the reference (equal point(s) {equal}; {said})"
    if best["decision"] == NOT_JUDGED:
        return prefix + (f"identical, speed not judged: point(s) {equal} equal the reference, but {best['why']}; "
                         "nothing promoted")
    s = best["speed"]
    p = by[best["point"]]
    words = f"promote point {best['point']} ({best['label']}): outputs equal the reference, exact " + (
        count_words(p["exact"]["k"], p["exact"]["n"]) if p["exact"] else "?")
    words += f"; decode {s['median']:.1f} tok/s ({_figure_words(s['figure'])}), {_speed_words(s)}"
    if best["faster"] > 1:
        words += f"; the fastest of {best['faster']} faster equal points"
    return prefix + words


def _figure_words(figure: str) -> str:
    return "conventional median" if figure == "conventional_tok_s" else "after-TTFT median: under 101 tokens"


def sweep_json(*, backend: str, reference: str, launch: str, server_args: str, axes: tuple[Axis, ...],
               points: list[dict], reference_sig: Signature, sweep_max: int | None, interruption: str | None,
               repro: dict | None, started: str, written: str, final: bool, code: int | None = None) -> dict:
    """The whole report. While the sweep runs (final False) its status is `running` and it has no exit code; at
    the end the exit code is `code` when given (4: a point's options refused), else 0 promoted, 1 none, 2 partial."""
    sigs = {p["index"]: p.pop("_sig") for p in points}
    classes = token_classes(sigs, reference_sig)
    labels = {p["index"]: p["label"] for p in points}
    for cls in classes:
        for p in points:
            p["class"] = cls.name if p["index"] in cls.points else p["class"]
    class_rows = [{**cls.as_json(), "labels": [labels[k] for k in cls.points]} for cls in classes]
    partial = bool(interruption) or any(p["status"] == "not run" for p in points)
    best = promotion(points)
    status = "running" if not final else "partial" if partial or code is not None else "complete"
    exit_code = None if not final else code if code is not None else PARTIAL if partial else (
        PROMOTED if best and best["decision"] == PROMOTE else NONE)
    data = {"schema_version": SCHEMA_VERSION, "kind": "sweep", "status": status, "exit_code": exit_code,
            "answer": "", "promotion": best, "backend": backend, "reference": reference,
            "launch": launch or None, "server_args": server_args or None,
            "axes": [{"kind": a.kind, "name": a.name, "values": list(a.values)} for a in axes],
            "sweep_max": sweep_max, "points": points, "classes": class_rows,
            "reference_class": next((c["name"] for c in class_rows if c["equals_reference"]), None),
            "repro": repro, "interruption": interruption, "started_utc": started, "written_utc": written}
    data["answer"] = _answer(data, best)
    return data


def write_report(folder: Path, data: dict) -> None:
    atomic_write_text(folder / "sweep.json", json.dumps(data, indent=1) + "\n")
    atomic_write_text(folder / "sweep.md", markdown(data))
    atomic_write_text(folder / "sweep.html", render_html(data))
