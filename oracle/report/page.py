"""What the report's own HTML sections share: the page's CSS, escaping, hover titles; and the one page shell of
the tools' reports (bisect.html, sweep.html).

    f"<td{title(hover)}>{e(value)}</td>"
    tool_page("sweep", data, status_class="pass", answer=data["answer"], facts=[("reference", "DIR")], body=...)
"""

from __future__ import annotations

from html import escape

__all__ = ["PAGE_CSS", "e", "hover", "span", "title", "tool_page"]

PAGE_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#111}
h1{font-size:1.4em;margin:.2em 0} h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0} th,td{border:1px solid #bbb;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2} .mono,code{font-family:ui-monospace,monospace;font-size:12px}
td.cell{text-align:center;white-space:nowrap} td.cell a{color:inherit}
.exact,.pass,.recorded{background:#d8f5d0} .near-tie{background:#fff1b8} .divergent,.fail{background:#f9c5c5}
.within-reference-noise{background:#d6e6ff} .inconclusive,.not-run{background:#e4e4e4} .info,.dropped{background:#eef}
.verdict{display:inline-block;padding:2px 10px;border:2px solid #333;font-weight:bold}
.side{display:inline-block;vertical-align:top;width:48%;margin-right:1%} pre{white-space:pre-wrap;margin:.2em 0}
details{margin:.4em 0;border:1px solid #ccc;padding:.3em .6em} summary{cursor:pointer}
@media print{details{break-inside:avoid} a{text-decoration:none}}
"""


def e(value) -> str:
    """The value as HTML text (None as nothing)."""
    return escape("" if value is None else str(value))


def hover(count: dict | None) -> str:
    """'Wilson 95% 0.76–1.00' from a count identity.json holds ({"k", "n", "wilson95"}); '' without one."""
    return f"Wilson 95% {count['wilson95'][0]:.2f}–{count['wilson95'][1]:.2f}" if count else ""


def title(text: str | None) -> str:
    """A hover title attribute (' title=...'), or nothing."""
    return f" title='{e(text)}'" if text else ""


def span(text: str, hover_text: str) -> str:
    return f"<span{title(hover_text)}>{e(text)}</span>" if hover_text else e(text)


def tool_page(tool: str, data: dict, *, status_class: str, answer: str, facts, body: str) -> str:
    """A tool's HTML report: its status and answer on top, the stop if it stopped midway (`data["interruption"]`),
    its facts (label, value) as a table, then its own sections (`body`, HTML) and the footer (`data`'s
    written_utc and schema_version)."""
    status = data["status"]
    rows = "".join(f"<tr><th>{e(k)}</th><td class=mono>{e(v)}</td></tr>" for k, v in facts)
    stopped = f"<p class=fail><b>Stopped midway:</b> {e(data['interruption'])}</p>" if data.get("interruption") else ""
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>oracle {tool}: {e(status)}</title><style>{PAGE_CSS}</style></head><body>"
            f"<h1>oracle {tool}: <span class='verdict {status_class}'>{e(status.upper())}</span></h1>"
            f"<p id=answer><b>{e(answer)}</b></p>{stopped}<table>{rows}</table>{body}"
            f"<p><small>written {e(data['written_utc'])} · schema {e(data['schema_version'])}</small></p>"
            "</body></html>\n")
