"""The localize section: what `--localize` found when a gate's tokens split (identity.json's `localize`, written by
the gate after `oracle localize` ran into `<report-dir>-localize/`): the answer, the band rule, the per-layer
curve (a picture in identity.html, a table in identity.md). Absent from a report without `--localize` or without a
split; `localize.json` in the localize folder holds every row.

    lines = markdown(data); page = html(data)
"""

from __future__ import annotations

from oracle.report.layer_curve import curve_svg
from oracle.report.page import e

__all__ = ["PLACE", "html", "markdown", "summary_of"]

PLACE = 137  # page order (report/sections.py): after the evidence, before the notes


def summary_of(data: dict, folder: str) -> dict:
    """identity.json's `localize` from a localize.json: the answer and the curve's rows (whole layers, the rows before
    the first layer, and the first row out of band); every row stays in localize.json."""
    loc = data["localize"]
    first = loc["first_out_of_band"]
    rows = [{k: r[k] for k in ("name", "layer", "whole", "relative_error", "band", "limit", "out_of_band")}
            for r in loc["rows"] if r["whole"] or r["layer"] < 0 or r["name"] == first]
    return {"status": data["status"], "exit_code": data["exit_code"], "answer": data["answer"], "folder": folder,
            "prompt": data["prompt"], "split": data["split"], "reference": data["reference"]["label"],
            "candidate": data["candidate"]["label"], "band_rule": loc["band_rule"], "first_out_of_band": first,
            "first_layer_out_of_band": loc["first_layer_out_of_band"], "first_lens_change": loc["first_lens_change"],
            "notes": loc["notes"], "rows": rows}


def _num(v) -> str:
    return format(v, ".3g") if isinstance(v, (int, float)) else str(v)


def _facts(loc: dict) -> list[str]:
    if loc.get("status") == "not-run":
        return [str(loc.get("detail") or "not run")]
    rule = loc["band_rule"]
    return [f"**{loc['answer']}**",
            f"prompt {loc['prompt']}, split at completion token {loc['split']}; reference {loc['reference']}, "
            f"candidate {loc['candidate']}; out of band when relative error > {rule['factor']:g} x the reference "
            f"repeat's + {rule['floor']:g}; every row in {loc['folder']}/localize.json", *loc.get("notes", [])]


def markdown(data: dict) -> list[str]:
    loc = data.get("localize")
    if not loc:
        return []
    lines = ["## Localize (`--localize`)", "", *[f"- {f}" for f in _facts(loc)], ""]
    if loc.get("rows"):
        lines += ["| layer | relative error | band | out of band |", "| --- | --- | --- | --- |"]
        for r in loc["rows"]:
            mark = "**first**" if r["name"] == loc["first_out_of_band"] else ("yes" if r["out_of_band"] else "")
            lines.append(f"| {r['name']} | {_num(r['relative_error'])} | {_num(r['band'])} | {mark} |")
        lines.append("")
    return lines


def html(data: dict) -> str:
    loc = data.get("localize")
    if not loc:
        return ""
    facts = "".join(f"<li>{e(f.strip('*'))}</li>" for f in _facts(loc))
    rows = loc.get("rows") or []
    first = loc.get("first_layer_out_of_band") or loc.get("first_out_of_band")
    curve = curve_svg(rows, first=first) if rows else ""
    table = "".join(f"<tr><td class=mono>{e(r['name'])}</td><td>{_num(r['relative_error'])}</td>"
                    f"<td>{_num(r['band'])}</td><td>{'out' if r['out_of_band'] else 'in'}</td></tr>" for r in rows)
    return (f"<section id=localize><h2>Localize</h2><ul>{facts}</ul>"
            + (f"<p>Relative error by layer, log scale; shaded: the band; marked: the first layer out of band.</p>"
               f"{curve}<table><tr><th>layer</th><th>relative error</th><th>band</th><th>out of band</th></tr>"
               f"{table}</table>" if rows else "") + "</section>")
