"""fleet.html: one self-contained page (inline CSS, no script, nothing fetched) with the grid of config x machine
(each cell the machine's latest verdict and its output class), then per config each machine's latest run, the
classes of machines whose outputs are identical, the machines that stand apart and what differs between machines
that disagree.

    write_fleet_page(Path("fleet.html"), fleet, title="oracle fleet")
"""

from __future__ import annotations

import html
from pathlib import Path

from oracle.ledger.fleet import Fleet, FleetConfig
from oracle.ledger.fleet_table import exact_text, pair_lines, speed_text
from oracle.redaction import public_text
from oracle.store.records import atomic_write_text

__all__ = ["render_fleet_page", "write_fleet_page"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #212121; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 13px; margin: .5em 0; }
td, th { border: 1px solid #ddd; padding: 2px 8px; text-align: left; }
td.cell { text-align: center; } .cls { font-size: 11px; color: #455a64; }
.pass { color: #2e7d32; font-weight: 600; } .fail { color: #c62828; font-weight: 600; }
td.pass { background: #e8f5e9; } td.fail { background: #ffebee; }
.apart { background: #fff3e0; border-left: 4px solid #ef6c00; padding: .3em 1em; margin: .5em 0; }
.pair { background: #f5f5f5; border-left: 4px solid #607d8b; padding: .3em 1em; margin: .5em 0; }
.pair pre { white-space: pre-wrap; margin: 0; font-size: 13px; }
"""


def _e(value) -> str:
    return html.escape("" if value is None else str(value))


def _or_dash(value) -> str:
    return "-" if value is None else str(value)


def _grid(fleet: Fleet) -> str:
    machines = fleet.machines
    head = "".join(f"<th>{_e(m)}</th>" for m in machines)
    rows = []
    for config in fleet.configs:
        cells = []
        for m in machines:
            run = config.latest.get(m)
            if run is None:
                cells.append("<td class=\"cell\">·</td>")
                continue
            state = "pass" if run.passed else "fail"
            cells.append(f"<td class=\"cell {state}\" data-machine=\"{_e(m)}\">{_e(run.row['verdict'])}"
                         f"<br><span class=\"cls\">class {_e(config.class_of(m))}</span></td>")
        rows.append(f"<tr><th>{_e(config.config)}</th>{''.join(cells)}</tr>")
    return (f"<table class=\"grid\"><tr><th>config \\ machine</th>{head}</tr>" + "".join(rows) + "</table>")


def _machines_table(config: FleetConfig) -> str:
    rows = []
    for machine, run in sorted(config.latest.items()):
        r = run.row
        state = "pass" if run.passed else "fail"
        rows.append(f"<tr><td>{_e(machine)}</td><td>{_e(config.class_of(machine))}</td>"
                    f"<td class=\"{state}\">{_e(r['verdict'])}</td><td>{exact_text(run)}</td>"
                    f"<td>{_e(speed_text(run))}</td><td>{_e(_or_dash(r['joules_per_token']))}</td>"
                    f"<td>{_e(r['accelerator_model'])}</td><td>{_e(r['driver'])}</td><td>{_e(r['runtime'])}</td>"
                    f"<td>{_e(r['started_utc'])}</td>"
                    f"<td><a href=\"{_e(Path(r['report_dir']).as_uri())}/identity.html\">{_e(r['report_dir'])}</a>"
                    "</td></tr>")
    return ("<table class=\"machines\"><tr><th>machine</th><th>class</th><th>latest verdict</th><th>exact</th>"
            "<th>speed (figure, label)</th><th>J/token</th><th>accelerator</th><th>driver</th><th>runtime</th>"
            "<th>started (UTC)</th><th>report</th></tr>" + "".join(rows) + "</table>")


def _config(config: FleetConfig) -> str:
    parts = [f"<h2>{_e(config.config)}</h2>",
             f"<p>reference: {_e(', '.join(config.references) or '-')}; {len(config.latest)} machine(s); "
             f"<span class=\"{'fail' if config.failing else 'pass'}\">{len(config.failing)} fail in their latest "
             "run</span></p>", _machines_table(config), "<h3>classes of identical outputs</h3><ul class=\"classes\">"]
    for c in config.classes:
        parts.append(f"<li data-class=\"{_e(c.label)}\"><b>class {_e(c.label)}</b>: {_e(', '.join(c.machines))} "
                     f"({len(c.fingerprints)} prompt(s); top-k logprobs {_e(c.top_k)})</li>")
    unclassed = [m for m in sorted(config.latest) if config.class_of(m) == "-"]
    if unclassed:
        parts.append(f"<li>no fingerprints (appended before them, or a run without records): "
                     f"{_e(', '.join(unclassed))}</li>")
    parts.append("</ul>")
    for apart in config.apart:
        parts.append(f"<div class=\"apart\"><b>{_e(apart.machine)}</b> stands apart ({_e(apart.what)}): "
                     f"{_e(apart.detail)}</div>")
    for pair in config.pairs:
        parts.append(f"<div class=\"pair\"><pre>{_e(chr(10).join(pair_lines(pair)))}</pre></div>")
    return "<section class=\"config\">" + "\n".join(parts) + "</section>"


def render_fleet_page(fleet: Fleet, *, title: str) -> str:
    failing = fleet.failing
    head = (f"<p>{len(fleet.configs)} config(s) x {len(fleet.machines)} machine(s); "
            f"<span class=\"{'fail' if failing else 'pass'}\">{len(failing)} machine x config fail in their latest "
            "run</span></p>")
    body = (_grid(fleet) + "\n" + "\n".join(_config(c) for c in fleet.configs)) if fleet.configs \
        else "<p>the ledger holds no run</p>"
    return public_text(f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_e(title)}</title>"
                       f"<style>{_STYLE}</style></head><body><h1>{_e(title)}</h1>{head}\n{body}</body></html>\n")


def write_fleet_page(path: Path, fleet: Fleet, *, title: str) -> Path:
    atomic_write_text(path, render_fleet_page(fleet, title=title))
    return path
