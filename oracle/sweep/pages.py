"""sweep.md and sweep.html from sweep.json's data: the answer on top, then the points, the classes and the repro.

    markdown(data), render_html(data)
"""

from __future__ import annotations

from oracle.compare.confidence import count_words
from oracle.report.page import e, tool_page

__all__ = ["markdown", "render_html"]

_STATUS_CLASS = {"complete": "pass", "partial": "not-run", "running": "inconclusive"}
HEADERS = ("#", "settings", "status", "class", "= ref", "exact (Wilson 95%)", "near-tie", "divergent", "contaminated",
           "acceptance", "decode tok/s", "vs reference", "wall s", "report")


def _exact(p: dict) -> str:
    return count_words(p["exact"]["k"], p["exact"]["n"]) if p.get("exact") else ""


def _acceptance(p: dict) -> str:
    spec = p.get("speculation")
    if not spec:
        return ""
    rate = f"{spec['acceptance']:.1%}" if spec.get("acceptance") is not None else "?"
    mal = f", mean accepted {spec['mean_accepted_length']:.2f}" if spec.get("mean_accepted_length") is not None else ""
    return rate + mal


def _decode(p: dict) -> str:
    s = p.get("speed")
    if not s:
        return ""
    return f"{s['median']:.1f}" + ("" if s["figure"] == "conventional_tok_s" else " (after TTFT)")


def _versus(p: dict) -> str:
    s = p.get("speed")
    if not s or s.get("ratio") is None:
        return ""
    ci = f" ({s['ci95'][0]:.2f}–{s['ci95'][1]:.2f})" if s.get("ci95") else " (no interval)"
    return f"{s['ratio']:.2f}x{ci}"


def _equal(p: dict) -> str:
    return {True: "yes", False: "no"}.get(p.get("equals_reference"), "")


def _status(p: dict) -> str:
    why = (p.get("why") or "").splitlines()
    return p["status"] + (f": {why[0][:160]}" if why and p["status"] != "finished" else "")


def _cells(p: dict) -> list[str]:
    return [str(p["index"]), p["label"], _status(p), p.get("class") or "", _equal(p), _exact(p),
            _n(p.get("near_tie")), _n(p.get("divergent")), _n(p.get("contaminated")), _acceptance(p), _decode(p),
            _versus(p), f"{p['wall_s']:.1f}", p.get("folder") or ""]


def _n(value) -> str:
    return "" if value is None else str(value)


def _facts(data: dict) -> list[tuple[str, str]]:
    axes = "; ".join(f"{a['name']} = {', '.join(a['values'])}" for a in data["axes"])
    facts = [("backend", data["backend"]), ("reference", data["reference"]), ("axes", axes),
             ("points", str(len(data["points"])) + (f" (--sweep-max {data['sweep_max']})" if data["sweep_max"] else ""))]
    facts += [("launch", data["launch"])] if data.get("launch") else []
    facts += [("server args", data["server_args"])] if data.get("server_args") else []
    return facts + [("started", data["started_utc"]), ("written", data["written_utc"])]


def _repro_words(repro: dict | None) -> str:
    if not repro:
        return ""
    return (f"repro of point {repro['point']}: {repro['path']} ({repro.get('status')})" if repro.get("path")
            else f"repro of point {repro['point']}: not made ({repro.get('error')})")


def _class_words(c: dict) -> str:
    return (f"class {c['name']}: points {', '.join(map(str, c['points']))} ({'; '.join(c['labels'])})"
            + (", equal to the reference" if c["equals_reference"] else ", not the reference's tokens"))


def markdown(data: dict) -> str:
    lines = [f"# oracle sweep: {data['status']}", "", f"**{data['answer']}**", ""]
    if data.get("interruption"):
        lines += [f"Stopped midway: {data['interruption']}", ""]
    lines += [f"- {k}: `{v}`" for k, v in _facts(data)] + [""]
    lines += ["## Points", "", "| " + " | ".join(HEADERS) + " |", "|" + " --- |" * len(HEADERS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _cells(p)) + " |" for p in data["points"]]
    lines += ["", "## Classes", "",
              "Points whose complete token arrays (every prompt, every token of the primary run) are identical.", ""]
    lines += [f"- {_class_words(c)}" for c in data["classes"]] or ["- none: no point finished"]
    if data.get("repro"):
        lines += ["", "## Repro", "", _repro_words(data["repro"])]
    return "\n".join(lines) + "\n"


def render_html(data: dict) -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in HEADERS)
    rows = []
    for p in data["points"]:
        cls = ("exact" if p.get("equals_reference") else "divergent" if p.get("equals_reference") is False
               else "not-run")
        rows.append(f"<tr data-point='{p['index']}' class={cls}>" + "".join(f"<td>{e(c)}</td>" for c in _cells(p))
                    + "</tr>")
    classes = "".join(f"<li>{e(_class_words(c))}</li>" for c in data["classes"]) or "<li>none: no point finished</li>"
    repro = f"<h2>Repro</h2><p>{e(_repro_words(data['repro']))}</p>" if data.get("repro") else ""
    body = (f"<h2>Points</h2><table><tr>{head}</tr>{''.join(rows)}</table>"
            "<h2>Classes</h2><p>Points whose complete token arrays (every prompt, every token of the primary run) are "
            f"identical.</p><ul>{classes}</ul>{repro}")
    return tool_page("sweep", data, status_class=_STATUS_CLASS.get(data["status"], ""), answer=data["answer"],
                     facts=_facts(data), body=body)
