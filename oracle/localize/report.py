"""localize.json, localize.md and localize.html, the answer on top; written in the localize run's own folder
(never into the gate's report, which is sealed).

    write_report(folder, data)     # data: what localize.json holds (its `localize` key: compare.Localization)
"""

from __future__ import annotations

import json
from pathlib import Path

from oracle.report.layer_curve import curve_svg
from oracle.report.page import e, tool_page
from oracle.store.records import atomic_write_text

__all__ = ["markdown", "render_html", "write_report"]

_STATUS_CLASS = {"localized": "fail", "within-band": "pass", "running": "inconclusive"}


def write_report(folder: Path, data: dict) -> None:
    atomic_write_text(folder / "localize.json", json.dumps(data, indent=1) + "\n")
    atomic_write_text(folder / "localize.md", markdown(data))
    atomic_write_text(folder / "localize.html", render_html(data))


def _facts(data: dict) -> list[tuple[str, str]]:
    loc = data["localize"]
    return [("report", data["report"]), ("reference", f"{data['reference']['label']} ({data['reference_dir']})"),
            ("candidate", data["candidate"]["label"]),
            ("path", f"prompt {data['prompt']}: its {data['path_tokens']} token ids up to the split at completion "
                     f"token {data['split']}; " + ("the tensors llama-eval-callback printed (the first and last 3 "
                                                   "positions, the last the split's, and each tensor's sum)"
                                                   if data["candidate"].get("layers") == "eval-callback"
                                                   else "layers read at the last position")),
            ("tokens at the split", f"reference #{data['reference_token']}, candidate #{data['candidate_token']}"),
            ("band rule", f"out of band when relative error > {loc['band_rule']['factor']:g} x the reference "
                          f"repeat's + {loc['band_rule']['floor']:g}"),
            ("logit lens", loc["lens"] or "none (this family gives none)"),
            ("status", f"{data['status']} (exit {data['exit_code']})"), ("wall s", f"{data['wall_s']:.1f}")]


def _num(v: float | str, spec: str = ".3g") -> str:
    return format(v, spec) if isinstance(v, (int, float)) else str(v)  # "inf", "nan" as compare wrote them


def _lens(r: dict) -> str:
    if r["lens_reference"] is None:
        return ""
    return f"{r['lens_reference']} / {r['lens_candidate']}" + (" changed" if r["lens_changed"] else "")


def markdown(data: dict) -> str:
    loc = data["localize"]
    lines = ["# oracle localize", "", f"**{data['answer']}**", ""]
    lines += [f"- {k}: {v}" for k, v in _facts(data)]
    lines += ["", "## Per layer (candidate against reference, at the split position)", "",
              "| row | relative error | band | cosine | max abs diff | out of band | lens top-1 ref / cand |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in loc["rows"]:
        mark = "**yes**" if r["name"] == loc["first_out_of_band"] else ("yes" if r["out_of_band"] else "")
        lines.append(f"| {r['name']} | {_num(r['relative_error'])} | {_num(r['band'])} | {_num(r['cosine'], '.6f')} | "
                     f"{_num(r['max_abs_diff'])} | {mark} | {_lens(r)} |")
    lines += ["", *[f"- {note}" for note in loc["notes"]], "",
              f"written {data['written_utc']} (started {data['started_utc']})", ""]
    return "\n".join(lines)


def render_html(data: dict) -> str:
    loc = data["localize"]
    rows = []
    for r in loc["rows"]:
        cls = "divergent" if r["out_of_band"] else "exact"
        rows.append(f"<tr data-row='{e(r['name'])}'><td class=mono>{e(r['name'])}</td>"
                    f"<td>{_num(r['relative_error'])}</td><td>{_num(r['band'])}</td><td>{_num(r['cosine'], '.6f')}</td>"
                    f"<td>{_num(r['max_abs_diff'])}</td><td class='cell {cls}'>{'out' if r['out_of_band'] else 'in'}"
                    f"</td><td>{e(_lens(r))}</td></tr>")
    first = loc["first_layer_out_of_band"] or loc["first_out_of_band"]
    notes = "".join(f"<li>{e(n)}</li>" for n in loc["notes"])
    body = ("<h2>Per-layer curve</h2><p>Relative error of the candidate's layer output against the reference's, "
            "log scale; shaded: the band from the reference's own repeat; marked: the first layer out of band.</p>"
            f"{curve_svg(loc['rows'], first=first)}<h2>Per layer</h2><table><tr><th>row</th><th>relative error</th>"
            "<th>band</th><th>cosine</th><th>max |diff|</th><th>out of band</th><th>lens top-1 ref / cand</th></tr>"
            f"{''.join(rows)}</table>" + (f"<ul>{notes}</ul>" if notes else ""))
    return tool_page("localize", data, status_class=_STATUS_CLASS.get(data["status"], ""), answer=data["answer"],
                     facts=_facts(data), body=body)
