"""history.html: one self-contained page (inline CSS and SVG, no script, nothing fetched) with, per machine and
config, the runs, the per-prompt strip, speed over time and every change of verdict with what changed.

    write_page(Path("history.html"), history, title="oracle history")
"""

from __future__ import annotations

import html
from pathlib import Path

from oracle.ledger.plots import prompt_strip, speed_over_time
from oracle.ledger.queries import ConfigHistory, History
from oracle.ledger.table import change_lines
from oracle.redaction import public_text
from oracle.store.records import atomic_write_text

__all__ = ["render_page", "write_page"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #212121; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 13px; }
td, th { border: 1px solid #ddd; padding: 2px 8px; text-align: left; }
.pass { color: #2e7d32; font-weight: 600; } .fail, .partial { color: #c62828; font-weight: 600; }
.change { background: #fff3e0; border-left: 4px solid #ef6c00; padding: .5em 1em; margin: 1em 0; }
.change pre { white-space: pre-wrap; margin: 0; font-size: 13px; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
"""


def _e(value) -> str:
    return html.escape("" if value is None else str(value))


def _runs_table(group: ConfigHistory) -> str:
    rows = []
    for run in group.runs:
        r = run.row
        counted = r["prompts_exact"] is not None and r["prompts_total"]
        exact = f"{r['prompts_exact']}/{r['prompts_total']}" if counted else ""
        rows.append(f"<tr><td>{_e(r['started_utc'])}</td><td>{_e(r['mode'])}</td>"
                    f"<td class=\"{'pass' if run.passed else 'fail'}\">{_e(run.shown_verdict)}</td><td>{exact}</td>"
                    f"<td>{_e(r['tok_s'])}</td><td>{_e(r['speed_label'])}</td><td>{_e(r['joules_per_token'])}</td>"
                    f"<td>{_e(r['driver'])}</td><td><a href=\"{_e(Path(r['report_dir']).as_uri())}/identity.html\">"
                    f"{_e(r['report_dir'])}</a></td></tr>")
    return ("<table><tr><th>started (UTC)</th><th>mode</th><th>verdict</th><th>exact</th><th>tok/s</th>"
            "<th>speed label</th><th>J/token</th><th>driver</th><th>report</th></tr>" + "".join(rows) + "</table>")


def _group(group: ConfigHistory) -> str:
    parts = [f"<h2>{_e(group.machine)} · {_e(group.config)}</h2>",
             f"<p>{len(group.runs)} run(s); latest: <span class=\"{'fail' if group.latest_failed else 'pass'}\">"
             f"{_e(group.runs[-1].shown_verdict)}</span>; accelerator: {_e(group.runs[-1].row['accelerator'])}</p>"]
    for change in group.changes:
        parts.append("<div class=\"change\"><h3>verdict changed from pass to fail</h3><pre>"
                     + _e("\n".join(change_lines(change))) + "</pre></div>")
    parts.append(_runs_table(group))
    parts.append(f"<figure class=\"strip\">{prompt_strip(group)}<figcaption>per-prompt strip</figcaption></figure>")
    speed = speed_over_time(group)
    metered = any(r.row["joules_per_token"] is not None for r in group.runs)
    caption = "speed over time" + ("" if metered else "; J/token: no run of this config read an energy meter")
    parts.append(f"<figure class=\"speed\">{speed}<figcaption>{caption}</figcaption></figure>" if speed
                 else "<p>no run of this config has a speed card</p>")
    return "<section class=\"config\">" + "\n".join(parts) + "</section>"


def render_page(history: History, *, title: str, filters: str) -> str:
    failing = history.failing
    head = (f"<p>{len(history.groups)} config(s); filters: {_e(filters or 'none')}; "
            f"<span class=\"{'fail' if failing else 'pass'}\">{len(failing)} fail in their latest run</span></p>")
    body = "\n".join(_group(g) for g in history.groups) or "<p>the ledger holds no run that these filters keep</p>"
    return public_text(f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_e(title)}</title>"
                       f"<style>{_STYLE}</style></head><body><h1>{_e(title)}</h1>{head}\n{body}</body></html>\n")


def write_page(path: Path, history: History, *, title: str, filters: str = "") -> Path:
    atomic_write_text(path, render_page(history, title=title, filters=filters))
    return path
