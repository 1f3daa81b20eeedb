"""bisect.json, bisect.md and bisect.html from the bisect's data, the answer on top; every write atomic and public
(`store.records.atomic_write_text`), rewritten after every server start so an interrupted bisect leaves its
finished probes on disk.

    write_report(folder, data)     # data: what bisect.json holds
"""

from __future__ import annotations

import json
from pathlib import Path

from oracle.report.page import e, tool_page
from oracle.store.records import atomic_write_text

__all__ = ["markdown", "render_html", "write_report"]

_STATUS_CLASS = {"culprit": "fail", "nothing-to-bisect": "pass", "budget": "inconclusive",
                 "unreproducible": "fail", "interrupted": "not-run", "running": "inconclusive"}


def write_report(folder: Path, data: dict) -> None:
    atomic_write_text(folder / "bisect.json", json.dumps(data, indent=1) + "\n")
    atomic_write_text(folder / "bisect.md", markdown(data))
    atomic_write_text(folder / "bisect.html", render_html(data))


def _answer(data: dict) -> str:
    return data.get("answer") or "running: no answer yet"


def _split(split: dict | None) -> str:
    return f"{split['prompt']} @{split['token']}" if split else "exact"


def _run_result(run: dict) -> str:
    rows = run.get("rows") or []
    if run.get("role") == "reference":
        return f"{len(rows)} prompts recorded: the tokens every other run is compared with"
    diverged = [r for r in rows if r["verdict"] != "exact"]
    if not diverged:
        return f"{len(rows)}/{len(rows)} exact"
    first = min(diverged, key=lambda r: r["first_divergence"] if r["first_divergence"] is not None else 1 << 30)
    return f"{len(rows) - len(diverged)}/{len(rows)} exact; {first['prompt']} @{first['first_divergence']}"


def _facts(data: dict) -> list[tuple[str, str]]:
    return [("good (A)", data["good"]), ("bad (B)", data["bad"]), ("backend", data["backend"]),
            ("suite", f"{data['suite']['name']} ({len(data['prompts'])} prompts x {data['max_tokens']} tokens, "
                      f"greedy, concurrency {data['concurrency']})"),
            ("diverged under B", ", ".join(data["diverged"]) or "none"),
            ("probes", f"{len(data['probes'])} of --max-probes {data['max_probes']}, {data['trials']} server "
                       f"start(s) each unless the first diverges"),
            ("server starts", str(data["server_starts"])), ("status", f"{data['status']} (exit {data['exit_code']})")]


def markdown(data: dict) -> str:
    lines = ["# oracle bisect", "", f"**{_answer(data)}**", ""]
    if data.get("interruption"):
        lines += [f"> Stopped midway: {data['interruption']}", ""]
    lines += [f"- {k}: `{v}`" if k in ("good (A)", "bad (B)") else f"- {k}: {v}" for k, v in _facts(data)]
    lines += ["", "## Differences between A and B", "", "| # | change |", "| --- | --- |"]
    lines += [f"| {k} | `{c['label']}` |" for k, c in enumerate(data["changes"], 1)]
    lines += ["", "## Baseline runs (each compared with A run 1, token for token)", "",
              "| run | result | wall s | server log |", "| --- | --- | --- | --- |"]
    lines += [f"| {r['name']} | {_run_result(r)} | {r['wall_s']:.1f} | {r['log'] or ''} |" for r in data["runs"]]
    lines += ["", "## Probes (changes applied to A; bad: any start diverges from A run 1)", "",
              "| probe | role | applied to A | verdict | first divergence | starts | wall s |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for p in data["probes"]:
        applied = ", ".join(f"`{label}`" for label in p["changes"])
        lines.append(f"| {p['number']} | {p['role']} | {applied} | {p['verdict']} | {_split(p['first_divergence'])} "
                     f"| {len(p['trials'])} | {p['wall_s']:.1f} |")
    lines += ["", "## Probe commands", ""]
    lines += [f"{p['number']}. `{p['command']}`" for p in data["probes"]]
    lines += ["", f"written {data['written_utc']} (started {data['started_utc']})", ""]
    return "\n".join(lines)


def _run_class(run: dict) -> str:
    return "exact" if all(r["verdict"] == "exact" for r in run.get("rows") or []) else "divergent"


def render_html(data: dict) -> str:
    status = data["status"]
    changes = "".join(f"<tr><td>{k}</td><td class=mono>{e(c['label'])}</td><td>{e(c['kind'])}</td></tr>"
                      for k, c in enumerate(data["changes"], 1))
    runs = "".join(f"<tr class={_run_class(r)}><td>{e(r['name'])}</td><td>{e(_run_result(r))}</td><td>{r['wall_s']:.1f}</td>"
                   f"<td class=mono>{e(r['command'])}</td></tr>" for r in data["runs"])
    probes = []
    for p in data["probes"]:
        cls = {"bad": "divergent", "good": "exact"}.get(p["verdict"], "not-run")
        trials = "; ".join(f"start {k}: {_run_result(t)} in {t['wall_s']:.1f} s"
                           for k, t in enumerate(p["trials"], 1))
        probes.append(f"<tr data-probe='{p['number']}'><td>{p['number']}</td><td>{e(p['role'])}</td>"
                      f"<td class=mono>{e(', '.join(p['changes']))}</td><td class='cell {cls}'>{e(p['verdict'])}</td>"
                      f"<td>{e(_split(p['first_divergence']))}</td><td>{e(trials)}</td><td>{p['wall_s']:.1f}</td>"
                      f"<td class=mono><small>{e(p['command'])}</small></td></tr>")
    body = (f"<h2>Differences between A and B</h2><table><tr><th>#</th><th>change</th><th>kind</th></tr>{changes}"
            "</table><h2>Baseline runs</h2><p>Each compared with A run 1, token for token.</p>"
            f"<table><tr><th>run</th><th>result</th><th>wall s</th><th>command</th></tr>{runs}</table>"
            "<h2>Probes</h2><p>Changes applied to A; a probe is bad when any of its server starts diverges from A "
            "run 1 on a prompt that diverged under B.</p><table><tr><th>probe</th><th>role</th><th>applied to A</th>"
            "<th>verdict</th><th>first divergence</th><th>starts</th><th>wall s</th><th>command</th></tr>"
            f"{''.join(probes)}</table>")
    return tool_page("bisect", data, status_class=_STATUS_CLASS.get(status, ""), answer=_answer(data),
                     facts=_facts(data), body=body)
