"""The servers section of a merged report (pytest -n N): one row per server and worker, and the c1 prompts two
servers both ran; empty for a run on one server.

    lines = markdown(data); page = html(data)
"""

from __future__ import annotations

from oracle.report.page import e

__all__ = ["PLACE", "html", "markdown"]

PLACE = 10  # page order (report/sections.py): pytest -n: one row per server


def markdown(data: dict) -> list[str]:
    ident = data["identity"]
    servers = ident.get("servers") or []
    if not servers:
        return []
    lines = ["", f"Servers ({len(servers)}, one pytest-xdist worker each; their own reports in `servers/`):", "",
             "| server | worker | url | prompts at c1 | checks | failed | verdict |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in servers:
        lines.append(f"| {s['label']} | {s['worker']} | {s['url']} | {len(s['prompts_at_c1'])} | {len(s['checks'])} | "
                     f"{', '.join(s['failed']) or '-'} | {s['verdict']} |")
    cross = ident.get("servers_c1_crosscheck") or {}
    if cross.get("identical") or cross.get("different"):
        lines += ["", f"c1 on two servers (ladder and boot baselines): {cross['identical']} identical, "
                      f"{len(cross['different'])} different" + (": " + "; ".join(cross["different"][:8])
                                                                 if cross["different"] else "")]
    return lines


def html(data: dict) -> str:
    servers = (data.get("identity") or {}).get("servers") or []
    if not servers:
        return ""
    body = "".join(f"<tr class='{e(s['verdict'])}'><td>{e(s['label'])}</td>"
                   f"<td>{e(s['worker'])}</td><td class=mono>{e(s['url'])}</td><td>{len(s['prompts_at_c1'])}</td>"
                   f"<td>{len(s['checks'])}</td><td class=mono>{e(', '.join(s['failed']) or '-')}</td>"
                   f"<td>{e(s['verdict'])}</td></tr>" for s in servers)
    return ("<h2>Servers</h2><table><tr><th>server</th><th>worker</th><th>url</th><th>prompts at c1</th><th>checks</th>"
            f"<th>failed</th><th>verdict</th></tr>{body}</table>")
