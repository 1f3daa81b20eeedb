"""The checks section, with the evidence beside them: every check's verdict and outcome, which evidence the
server gave, cache-zero and speculation (drafted, accepted, per request).

    lines = markdown(data); page = html(data)
"""

from __future__ import annotations

import json

from oracle.report.page import e

__all__ = ["PLACE", "html", "markdown"]

PLACE = 130  # page order (report/sections.py): every check, cache-zero and speculation evidence


def markdown(data: dict) -> list[str]:
    lines = []
    spec = data.get("speculation")
    if spec and spec.get("drafted") is not None:
        rate = f", rate {spec['rate']:.1%}" if spec.get("rate") is not None else ""
        mal = f", mean accepted length {spec['mean_accepted_length']:.2f}" if spec.get("mean_accepted_length") else ""
        per_pos = (f", accepted per draft position {', '.join(f'{v:g}' for v in spec['accepted_per_position'])}"
                   if spec.get("accepted_per_position") else "")
        lines.append(f"- speculation: drafted {spec['drafted']:g}, accepted {spec['accepted']:g}{rate}{mal}{per_pos} "
                     f"(from {spec['source']})")
    lines += ["", "| check | kind | verdict | outcome | detail |", "| --- | --- | --- | --- | --- |"]
    for c in data["checks"]:
        detail = c["detail"].replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {c['id']} | {c['kind']} | {c['verdict']} | {c['outcome'] or 'pending'} | {detail} |")
    spec_rows = (spec or {}).get("per_request") or {}
    if spec_rows:
        lines += ["", "| request | drafted | accepted |", "| --- | --- | --- |"]
        lines += [f"| {k} | {v['drafted']} | {v['accepted']} |" for k, v in spec_rows.items()]
    return lines


def html(data: dict) -> str:
    parts = ["<h2>Checks, cache and speculation evidence</h2>"]
    given = data.get("evidence")
    if given:
        rows = "".join(f"<tr><td>{e(k)}</td><td>{e(v if isinstance(v, str) else ', '.join(v))}</td></tr>"
                       for k, v in given.items() if k != "family")
        parts.append(f"<p><b>evidence the server gave</b></p><table>{rows}</table>")
    cache = data.get("cache")
    if cache:
        parts.append(f"<p><b>cache-zero: {e(cache.get('verdict'))}</b> · {e(cache.get('requests_with_cache_field'))}"
                     f"/{e(cache.get('requests'))} requests carried a cached-token count · counter deltas "
                     f"<code>{e(json.dumps(cache.get('counter_deltas')))}</code></p>")
    spec = data.get("speculation") or {}
    if spec.get("drafted") is not None:
        rate = f", rate {spec['rate']:.1%}" if spec.get("rate") is not None else ""
        mal = (f", mean accepted length {spec['mean_accepted_length']:.2f}"
               if spec.get("mean_accepted_length") is not None else "")
        per_pos = (", accepted per draft position " + ", ".join(f"{v:g}" for v in spec["accepted_per_position"])
                   if spec.get("accepted_per_position") else "")
        parts.append(f"<p><b>speculation</b>: drafted {spec['drafted']:g}, accepted {spec.get('accepted') or 0:g}"
                     f"{e(rate)}{e(mal)}{e(per_pos)} (from {e(spec.get('source'))})</p>")
    checks = "".join(f"<tr class='{e(c['verdict'])}'><td class=mono>{e(c['id'])}</td><td>{e(c['verdict'])}</td>"
                     f"<td>{e(c.get('outcome') or 'pending')}</td><td>{e(c['detail'])}</td></tr>"
                     for c in data.get("checks", []))
    parts.append(f"<table><tr><th>check</th><th>verdict</th><th>outcome</th><th>detail</th></tr>{checks}</table>")
    return "".join(parts)
