"""The decode-vs-prefill section of identity.md and identity.html, both from identity.json's
`decode_vs_prefill`.

    lines = markdown(data)   # [] when the run did not compare decode with prefill
    fragment = html(data)    # "" likewise
"""

from __future__ import annotations

from html import escape

__all__ = ["PLACE", "html", "markdown"]

PLACE = 40  # page order (report/sections.py): decode-time top-k against the same path scored as a prompt

_HEAD = ("| mode | prompt | positions | bit-identical | max \\|Δlogprob\\| (nats) | "
         "where (position: decode / "
         "prefill) | Same top p | Mean KLD (lower bound) |")


def _where(w: dict | None) -> str:
    return "-" if not w else f"{w['position']}: {w['decode']:.6g} / {w['prefill']:.6g}"


def _cells(s: dict) -> list[str]:
    if not s.get("positions"):
        return ["0", "-", "-", "-", "-", "-"]
    return [str(s["positions"]), f"{s['bit_identical']}/{s['positions']}", f"{s['max_abs_delta']:.3g}",
            _where(s.get("worst")), f"{100 * s['same_top1']:.2f} %", f"{s['mean_kld']:.3g}"]


def _rows(dvp: dict) -> list[tuple[str, str, list[str]]]:
    """(mode, prompt, cells) for every mode: overall first, then each prompt; a mode not run in one row."""
    rows = []
    for name, mode in (dvp.get("modes") or {}).items():
        label = name + (" (the server's batch)" if mode.get("served_batch") else "")
        if mode.get("not_offered") or mode.get("not_reached"):
            why = "not offered: " + mode["not_offered"] if mode.get("not_offered") else "not reached: " + \
                mode["not_reached"]
            rows.append((label, why, []))
            continue
        rows.append((label, "**overall**", _cells(mode["overall"])))
        rows += [(label, pid, _cells(s)) for pid, s in mode["per_prompt"].items()]
        rows += [(label, pid, ["not compared: " + err]) for pid, err in (mode.get("errors") or {}).items()]
    return rows


def _intro(dvp: dict) -> str:
    tol = dvp.get("tolerance_nats")
    gate = (f"gated at --dvp-max-delta {tol:g} nats" if tol is not None
            else "reported only (no --dvp-max-delta)")
    return (f"Decode vs prefill, top-{dvp.get('top_k')}: {dvp.get('definition', '')}. Scored as a prompt by "
            f"{dvp.get('scoring')}; a chunked mode feeds the prefix that many tokens per step. {gate}.")


def markdown(data: dict) -> list[str]:
    dvp = data.get("decode_vs_prefill")
    if not dvp:
        return []
    lines = ["", "## Decode vs prefill", ""]
    if dvp.get("not_offered"):
        return lines + [f"Not offered: {dvp['not_offered']}."]
    lines += [_intro(dvp), "", _HEAD, "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for mode, prompt, cells in _rows(dvp):
        cells = cells + [""] * (6 - len(cells))
        lines.append(f"| {mode} | {prompt} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return lines


def html(data: dict) -> str:
    dvp = data.get("decode_vs_prefill")
    if not dvp:
        return ""
    if dvp.get("not_offered"):
        return f"<h2>Decode vs prefill</h2><p>Not offered: {escape(dvp['not_offered'])}.</p>"
    names = ("mode", "prompt", "positions", "bit-identical", "max |Δlogprob| (nats)",
             "where (position: decode / prefill)", "Same top p", "Mean KLD (lower bound)")
    head = "".join(f"<th>{escape(h)}</th>" for h in names)
    body = "".join(f"<tr><td class=mono>{escape(m)}</td><td>{escape(p.strip('*'))}</td>"
                   + ("".join(f"<td>{escape(c)}</td>" for c in cells) if len(cells) > 1 else
                      f"<td colspan=6>{escape(cells[0]) if cells else ''}</td>") + "</tr>"
                   for m, p, cells in _rows(dvp))
    return f"<h2>Decode vs prefill</h2><p>{escape(_intro(dvp))}</p><table><tr>{head}</tr>{body}</table>"
