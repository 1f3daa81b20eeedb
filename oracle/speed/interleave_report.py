"""The interleaved A/B session in the report (identity.json `speed.interleave`): how the servers ran, the ABBA
order, every pass's median decode rate, and the A/A control's false-claim count.

    markdown(data)   # identity.md lines ([] without an interleaved session)
    html(data)       # its <h2> section ("" without one)
"""

from __future__ import annotations

from html import escape

from oracle.speed.interleave import FIGURE_WORDS

__all__ = ["PLACE", "html", "markdown"]

PLACE = 90  # page order (report/sections.py): --reference-launch: the interleaved A/B session

SERVERS_WORDS = {"one-at-a-time": "one server up at a time, each pass on its own boot after a warm-up",
                 "both-up": "reference and candidate servers up together, each warmed up once"}
COLUMNS = ("session", "round", "side", "median tok/s", "keys", "tokens", "wall s", "cache-zero", "timestamps", "boot")


def _block(data: dict) -> dict | None:
    return (data.get("speed") or {}).get("interleave")


def _facts(block: dict) -> list[str]:
    out = [f"servers: {block['servers']} ({SERVERS_WORDS.get(block['servers'], '')})",
           f"reference launch: {block.get('reference_launch')}",
           f"decode rate of each pass: {FIGURE_WORDS.get(block['figure'], block['figure'])}, median over the keys "
           "(prompts)", ("design: the sequential test, each session until it decides, at most "
                         f"{block.get('rounds_max')} rounds" if block.get("design") == "sequential"
                         else f"design: {block.get('rounds')} fixed ABBA rounds"),
           f"order (A = reference, B = candidate or, in an A/A pair, the reference again): "
                        f"{', '.join(block['order']) or 'none finished'}"]
    if block.get("control"):
        control = block["control"]
        out.append(control["words"] + ": " + ", ".join(f"[{lo:.2f}, {hi:.2f}]" for lo, hi in control["intervals"]))
    return out


def _row(p: dict) -> list[str]:
    median = "-" if p["median"] is None else f"{p['median']:.1f}"
    timestamps = "credible" if p["credible"] else "not credible: " + "; ".join(p["not_credible"])
    return [p["session"], str(p["round"]), p["side"], median, str(len(p["rates"])), str(p["tokens"]),
            f"{p['wall_s']:.2f}", str(p["cache"]), timestamps, str(p.get("boot") or "-")]


def markdown(data: dict) -> list[str]:
    block = _block(data)
    if not block:
        return []
    lines = ["", "## Interleaved A/B speed (speed-ab)", ""] + [f"- {f}" for f in _facts(block)]
    lines += ["", "| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    lines += ["| " + " | ".join(_row(p)) + " |" for p in block["passes"]]
    return lines


def html(data: dict) -> str:
    block = _block(data)
    if not block:
        return ""
    e = lambda v: escape(str(v))  # noqa: E731
    facts = "".join(f"<li>{e(f)}</li>" for f in _facts(block))
    head = "".join(f"<th>{e(c)}</th>" for c in COLUMNS)
    rows = "".join("<tr>" + "".join(f"<td>{e(x)}</td>" for x in _row(p)) + "</tr>" for p in block["passes"])
    return f"<h2>Interleaved A/B speed (speed-ab)</h2><ul>{facts}</ul><table><tr>{head}</tr>{rows}</table>"
