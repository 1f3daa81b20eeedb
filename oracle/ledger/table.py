"""`oracle history`'s terminal table: per machine and config one row per run, then each change of verdict with
what changed between the last passing run and the first failing one.

    print(history_table(history))
"""

from __future__ import annotations

from oracle.ledger.queries import Change, History, LedgerRun

__all__ = ["change_lines", "history_table"]

_WIDTH = 100  # an identity value longer than this is cut, the field's name stays whole


def _short(value: str) -> str:
    return value if len(value) <= _WIDTH else value[:_WIDTH - 1] + "…"


def _figure(value, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _exact(run: LedgerRun) -> str:
    k, n = run.row["prompts_exact"], run.row["prompts_total"]
    return "-" if k is None or not n else f"{k}/{n}"


def change_lines(change: Change) -> list[str]:
    """The change, as lines: which run failed first, the last pass before it, each identity field that differs
    (a launch command as its flags) and the bisect line."""
    bad, good = change.first_fail, change.last_pass
    lines = [f"first fail: {bad.row['started_utc']} ({bad.shown_verdict}) {bad.row['report_dir']}",
             f"last pass:  {good.row['started_utc']} {good.row['report_dir']}"]
    fields = [f for f in change.fields if f["field"] != "launch_command" or not change.launch_changes]
    if not fields and not change.launch_changes:
        lines.append("no identity field changed between them: the same configuration gave another verdict")
    for flag in change.launch_changes:
        lines.append(f"  flag: {flag}")
    for f in fields:
        lines.append(f"  {f['kind']}: {f['field']}: {_short(f['a'])} -> {_short(f['b'])}")
    if change.bisect:
        lines.append(f"  bisect the launch differences: {change.bisect}")
    return lines


def history_table(history: History) -> str:
    if not history.groups:
        return "the ledger holds no run that these filters keep"
    lines = []
    for group in history.groups:
        lines += ["", f"{group.machine} · {group.config}",
                  f"  {'started (UTC)':21} {'mode':7} {'verdict':17} {'exact':>6} {'tok/s':>8} {'J/token':>8}  report"]
        for run in group.runs:
            r = run.row
            lines.append(f"  {r['started_utc']:21} {r['mode']:7} {run.shown_verdict:17} {_exact(run):>6} "
                         f"{_figure(r['tok_s'], 1):>8} {_figure(r['joules_per_token'], 3):>8}  {r['report_dir']}")
        for change in group.changes:
            lines += ["  verdict changed from pass to fail:"] + [f"    {x}" for x in change_lines(change)]
        lines.append(f"  latest: {group.runs[-1].shown_verdict}" + (" (this config fails now)" if group.latest_failed else ""))
    failing = history.failing
    lines += ["", f"{len(failing)} of {len(history.groups)} config(s) fail in their latest run"
              + (": " + "; ".join(f"{g.machine} · {g.config}" for g in failing) if failing else "")]
    return "\n".join(lines[1:])
