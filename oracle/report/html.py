"""identity.html: one self-contained page (inline CSS and SVG, no script, no network) from identity.json.

    html = render_html(data)  # data: the dict identity.json holds
    (folder / "identity.html").write_text(html)

Header (verdict, counts, identity), the verdict grid (a row per prompt, a column per
condition, a labelled cell each), the split viewer for every non-exact cell, plots of
first-divergence positions and achieved overlap, canaries, cache and speculation evidence.
Labels are in the cells, so the page reads without colour and prints.
"""

from __future__ import annotations

import json
from html import escape
from typing import Iterable

from oracle.canary.context import context_words
from oracle.canary.results import canary_summary
from oracle.compare.conditions import first_split, headline_parts, verdict_rank
from oracle.compare.confidence import interval_words
from oracle.run.coverage_report import html as coverage_html
from oracle.speed.report import headline as speed_headline, html_section as speed_html

__all__ = ["PAGE_CSS", "grid", "render_html"]

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


def _e(value) -> str:
    return escape("" if value is None else str(value))


def _cell_id(prompt: str, column: str) -> str:
    return "split-" + "".join(ch if ch.isalnum() else "-" for ch in f"{prompt}-{column}")


def grid(data: dict) -> tuple[list[dict], dict[str, dict[str, dict]]]:
    """(columns, cells): columns [{"key", "title", "note"}]; cells[prompt][column key] = {"verdict", "label", "split"}."""
    prompts = list(data.get("prompts") or [])
    checks = data.get("checks", [])
    columns: list[dict] = []
    cells: dict[str, dict[str, dict]] = {}
    per_prompt = [c for c in checks if c["kind"] in ("tokens", "record")]
    if per_prompt:
        key = "reference" if data.get("mode") == "gate" else "c1"
        exact = ((data.get("summary") or {}).get("confidence") or {}).get("exact")
        columns.append({"key": key, "title": "vs reference" if key == "reference" else "c1 (recorded)", "note": "",
                        "hover": f"exact {exact['k']}/{exact['n']}, {_hover(exact)}" if key == "reference" and exact
                        else ""})
        for c in per_prompt:
            pid = c["id"][c["id"].index("[") + 1:-1]
            ev = c.get("evidence") or {}
            verdict = "recorded" if c["kind"] == "record" and c["verdict"] == "pass" else c["verdict"]
            first = ev.get("first_divergence")
            label = verdict if first is None or verdict == "exact" else f"{verdict} @{first}"
            cells.setdefault(pid, {})[key] = {"verdict": verdict, "label": label, "split": ev.get("split")}
    for c in checks:
        if c["kind"] not in ("ladder", "boot"):
            continue
        key = c["id"]
        ev = c.get("evidence") or {}
        overlap = ev.get("overlap")
        unproven = c["verdict"] == "inconclusive"
        note = f"overlap {overlap['reached']}/{overlap['asked']}" if overlap else ""
        title = c["id"].replace("ladder[", "").replace("boot[", "boot ").rstrip("]")
        tok_s = (((data.get("ladder") or {}).get(title) or {}).get("speed") or {}).get("throughput_tok_s")
        note += f" · {tok_s:.0f} tok/s" if tok_s else ""
        rows_n, exact_n = len(ev.get("rows", [])), sum(r["verdict"] == "exact" for r in ev.get("rows", []))
        hover = f"exact {exact_n}/{rows_n}, Wilson 95% {interval_words(exact_n, rows_n)}" if rows_n else ""
        columns.append({"key": key, "title": title, "note": note + (" (not proven)" if unproven else ""),
                        "hover": hover})
        if c["verdict"] == "not-run":
            for pid in prompts:
                cells.setdefault(pid, {})[key] = {"verdict": "not-run", "label": "not-run", "split": None}
            continue
        for pid, rows in _group(ev.get("rows", [])).items():
            worst = max(rows, key=lambda r: verdict_rank(r["verdict"]))
            firsts = [f for f in map(first_split, rows) if f is not None]
            agree = sum(r["verdict"] == "exact" for r in rows)
            label = worst["verdict"] + (f" @{min(firsts)}" if firsts else "")
            if worst["verdict"] != "exact" and worst["vs_c1"]["verdict"] == "exact":
                label += " (vs ref)"  # the same tokens as this run's c1; the candidate itself differs
            hover = ""
            if len(rows) > 1:
                label += f" ({agree}/{len(rows)})"
                hover = f"{agree}/{len(rows)} of this prompt's requests exact, Wilson 95% {interval_words(agree, len(rows))}"
            verdict = "inconclusive" if unproven and worst["verdict"] == "exact" else worst["verdict"]
            if unproven:
                label = f"inconclusive: {label}"
            split = next((r.get("split") for r in rows if r.get("split")), None)
            cells.setdefault(pid, {})[key] = {"verdict": verdict, "label": label, "split": split, "hover": hover}
    for pid in cells:
        if pid not in prompts:
            prompts.append(pid)
    return columns, {pid: cells.get(pid, {}) for pid in prompts}


def _group(rows: Iterable[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["prompt"], []).append(r)
    return out


def _header(data: dict) -> str:
    s = data.get("summary", {})
    ident = data.get("identity", {})
    conf = s.get("confidence") or {}
    parts: list[tuple[str, str]] = []  # (text, hover)
    logits = s.get("logits")
    if data.get("mode") != "gate":
        parts.append((f"{s.get('records', [0, 0])[0]}/{s.get('records', [0, 0])[1]} recorded", ""))
    elif s.get("exact", [0, 0])[1] or not logits:
        k, n = s.get("exact", [0, 0])
        parts.append((f"{k}/{n} exact", _hover(conf.get("exact"))))
    if logits:
        parts.append((f"Mean KLD {logits['mean_kld']:.6f} (lower bound), Same top p {100 * logits['same_top1']:.2f} %",
                      ""))
    parts += [(text, f"Wilson 95% {interval_words(*count)}")
              for text, count in headline_parts(data.get("ladder") or {}, data.get("boots") or {})]
    canaries = canary_summary(data.get("canaries") or {})
    if canaries:
        parts.append((f"canaries {canaries}", "; ".join(f"{family} {c['k']}/{c['n']}: {_hover(c)}"
                                                         for family, c in (conf.get("canaries") or {}).items())))
    spec = data.get("speculation") or {}
    if spec.get("rate") is not None:
        parts.append((f"acceptance {spec['rate']:.1%}", ""))
    speed = speed_headline(data.get("speed"))
    if speed:
        parts.insert(1, (speed, ""))
    verdict = data.get("verdict", "partial")
    server = ident.get("server") or {}
    model = ident.get("model") or {}
    env = ident.get("environment") or {}
    packages = ident.get("packages") or {}
    rows = [("backend", ident.get("backend")), ("server", f"{server.get('server')} build {server.get('build')}"),
            ("model", f"{model.get('path')} (sha256 {model.get('sha256')})"),
            ("server context", context_words(ident.get("served_context"))),
            ("launch command", ident.get("launch_command")), ("url", ident.get("url")),
            ("accelerator", json.dumps(ident.get("accelerator"), sort_keys=True) if ident.get("accelerator") else None),
            ("environment", ", ".join(f"{k}={v}" for k, v in sorted(env.items())) or None),
            ("versions", ", ".join(f"{k} {v}" for k, v in sorted(packages.items()) if v) or None),
            ("determinism", data.get("determinism")),
            ("reference", (data.get("reference") or {}).get("path"))]
    table = "".join(f"<tr><th>{_e(k)}</th><td class=mono>{_e(v)}</td></tr>" for k, v in rows if v)
    interrupted = (f"<p class=fail><b>Stopped midway:</b> {_e(data['interruption'])}</p>"
                   if data.get("interruption") else "")
    return (f"<h1>oracle {_e(data.get('mode'))}: <span class='verdict {_e(verdict)}'>{_e(verdict.upper())}</span></h1>"
            f"<p><b>{' · '.join(_span(text, hover) for text, hover in parts)}</b></p>{interrupted}<table>{table}</table>"
            f"{_counts(data)}")


def _hover(count: dict | None) -> str:
    """'Wilson 95% 0.76–1.00' from a count identity.json holds ({"k", "n", "wilson95"}); '' without one."""
    return f"Wilson 95% {count['wilson95'][0]:.2f}–{count['wilson95'][1]:.2f}" if count else ""


def _title(hover: str | None) -> str:
    return f" title='{_e(hover)}'" if hover else ""


def _span(text: str, hover: str) -> str:
    return f"<span{_title(hover)}>{_e(text)}</span>" if hover else _e(text)


def _counts(data: dict) -> str:
    """Every count identity.json gives an interval (its `confidence` keys), one row each, in a closed details."""
    conf = (data.get("summary") or {}).get("confidence") or {}
    rows = [("exact prompts", conf.get("exact"))] if (conf.get("exact") or {}).get("n") else []
    for name, part in [(k, v) for k, v in (data.get("ladder") or {}).items()] + \
            [(f"boot {k}", v) for k, v in (data.get("boots") or {}).items()]:
        rows += [(f"{name} {side.replace('_', ' ')}", c) for side, c in (part.get("confidence") or {}).items()]
    rows += [("boots agreeing with boot 1", conf.get("boots")), ("c1 identical on two servers", conf.get("servers_c1"))]
    rows += [(f"canaries {family}", c) for family, c in (conf.get("canaries") or {}).items()]
    body = "".join(f"<tr><td>{_e(name)}</td><td>{c['k']}/{c['n']}</td><td>{c['wilson95'][0]:.4f}–"
                   f"{c['wilson95'][1]:.4f}</td></tr>" for name, c in rows if c)
    if not body:
        return ""
    return ("<details class=counts><summary>Counts with their Wilson 95% intervals</summary><table><tr><th>count</th>"
            f"<th>k/n</th><th>Wilson 95%</th></tr>{body}</table></details>")


def _grid_html(columns: list[dict], cells: dict[str, dict[str, dict]]) -> str:
    head = "".join(f"<th{_title(c.get('hover'))}>{_e(c['title'])}<br><small>{_e(c['note'])}</small></th>"
                   for c in columns)
    body = []
    for pid, row in cells.items():
        tds = []
        for c in columns:
            cell = row.get(c["key"])
            if cell is None:
                tds.append("<td class=cell>-</td>")
                continue
            label = _e(cell["label"])
            if cell.get("split"):
                label = f"<a href='#{_cell_id(pid, c['key'])}'>{label}</a>"
            tds.append(f"<td class='cell {_e(cell['verdict'])}' data-verdict='{_e(cell['verdict'])}'"
                       f"{_title(cell.get('hover'))}>{label}</td>")
        body.append(f"<tr data-prompt='{_e(pid)}'><th class=mono>{_e(pid)}</th>{''.join(tds)}</tr>")
    return (f"<table class=grid><thead><tr><th>prompt</th>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def _top_table(top: list) -> str:
    if not top:
        return "<p><small>no logprobs at the split</small></p>"
    rows = "".join(f"<tr><td class=mono>{_e(repr(t[2]))}</td><td class=mono>#{_e(t[0])}</td><td>{t[1]:.4f}</td></tr>"
                   for t in top)
    return f"<table><tr><th>token</th><th>id</th><th>logprob</th></tr>{rows}</table>"


def _splits_html(columns: list[dict], cells: dict[str, dict[str, dict]]) -> str:
    out = []
    for pid, row in cells.items():
        for c in columns:
            cell = row.get(c["key"])
            split = cell and cell.get("split")
            if not split:
                continue
            ref, cand = split["reference"], split["candidate"]
            against = split.get("against", "reference")
            if split.get("position") is None:
                inner = f"<p>same tokens, finish reason {_e(against)} {_e(ref.get('finish'))} vs {_e(cand.get('finish'))}</p>"
            else:
                inner = (f"<p>first divergence at token {split['position']}; shared text before it:</p>"
                         f"<pre class=mono>{_e(split.get('shared_text'))}</pre>"
                         f"<div class=side><b>{_e(against)}</b> ({_e(ref.get('length'))} tokens, finish "
                         f"{_e(ref.get('finish'))})<pre class=mono>{_e(ref.get('text'))}</pre>"
                         f"<small class=mono>{_e(ref.get('ids'))}</small>{_top_table(ref.get('top'))}</div>"
                         f"<div class=side><b>{_e('candidate' if c['key'] == 'reference' else c['title'])}</b> "
                         f"({_e(cand.get('length'))} tokens, finish "
                         f"{_e(cand.get('finish'))})<pre class=mono>{_e(cand.get('text'))}</pre>"
                         f"<small class=mono>{_e(cand.get('ids'))}</small>{_top_table(cand.get('top'))}</div>")
            # Closed by default (a large report stays fast to lay out); a cell's link opens it, since the
            # link's target sits inside the details.
            out.append(f"<details><summary><b>{_e(pid)}</b> · {_e(c['title'])}: {_e(cell['label'])}</summary>"
                       f"<div id='{_cell_id(pid, c['key'])}'>{inner}</div></details>")
    if out:
        return "".join(out)
    missing = sum(1 for row in cells.values() for cell in row.values()
                  if cell["verdict"] not in ("exact", "recorded", "not-run", "inconclusive", "pass"))
    if missing:
        return (f"<p>{missing} non-exact cell(s) carry no split view in identity.json (written by an oracle "
                "before split views were recorded): the grid gives their first-divergence positions.</p>")
    return "<p>No split: every compared record is exact.</p>"


def _bars(title: str, bars: list[tuple[str, float, str]], unit: str) -> str:
    """A horizontal bar chart as inline SVG; bars: (label, value, extra text)."""
    if not bars:
        return ""
    top = max(v for _, v, _ in bars) or 1
    h, width = 18, 360
    rows = []
    for i, (label, value, extra) in enumerate(bars):
        w = max(1, int(width * value / top))
        y = i * (h + 4)
        rows.append(f"<text x='0' y='{y + 13}' font-size='12'>{_e(label)}</text>"
                    f"<rect x='110' y='{y}' width='{w}' height='{h}' fill='#7a9cc6'/>"
                    f"<text x='{116 + w}' y='{y + 13}' font-size='12'>{_e(extra or f'{value:g} {unit}')}</text>")
    total_h = len(bars) * (h + 4)
    return (f"<h3>{_e(title)}</h3><svg width='{width + 260}' height='{total_h}' "
            f"role='img' aria-label='{_e(title)}'>{''.join(rows)}</svg>")


def _plots(data: dict, cells: dict[str, dict[str, dict]]) -> str:
    firsts = []
    for c in data.get("checks", []):
        ev = c.get("evidence") or {}
        if c["kind"] == "tokens" and c["verdict"] != "exact" and ev.get("first_divergence") is not None:
            firsts.append(ev["first_divergence"])
        if c["kind"] in ("ladder", "boot"):
            firsts += [f for f in map(first_split, ev.get("rows", [])) if f is not None]
    out = []
    if firsts:
        hi = max(firsts) + 1
        step = max(1, -(-hi // 16))
        bins = [(f"{k}-{k + step - 1}", sum(k <= f < k + step for f in firsts), "") for k in range(0, hi, step)]
        out.append(_bars("First-divergence positions (records)", [(lbl, n, f"{n}") for lbl, n, _ in bins], ""))
    ladder = data.get("ladder") or {}
    if ladder:
        out.append(_bars("Achieved overlap per ladder level (requests generating at once)",
                         [(k, v["overlap"]["reached"], f"{v['overlap']['reached']} of {v['overlap']['asked']}")
                          for k, v in ladder.items() if v.get("overlap")], ""))
        speeds = [(k, v["speed"]["throughput_tok_s"], f"{v['speed']['throughput_tok_s']:.0f} tok/s")
                  for k, v in ladder.items() if (v.get("speed") or {}).get("throughput_tok_s")]
        if speeds:
            out.append(_bars("Aggregate throughput per ladder level (tokens / wall time of its waves, tok/s)",
                             speeds, ""))
    return "".join(out) or "<p>Nothing to plot: no splits, no ladder.</p>"


def _canaries(data: dict) -> str:
    rows = data.get("canaries") or {}
    if not rows:
        return "<p>No canaries ran.</p>"
    body = "".join(f"<tr class='{_e(r.get('verdict'))}'><td class=mono>{_e(k)}</td><td>{_e(r.get('verdict'))}</td>"
                   f"<td class=mono>{_e(r.get('expected'))}</td><td class=mono>{_e(r.get('extracted'))}</td>"
                   f"<td>{_e(r.get('reason') or r.get('why') or r.get('detail'))}</td></tr>" for k, r in rows.items())
    return f"<table><tr><th>canary</th><th>verdict</th><th>expected</th><th>got</th><th>why</th></tr>{body}</table>"


def _notes(data: dict) -> str:
    notes = data.get("notes") or []
    return "<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>" if notes else ""


def _servers(data: dict) -> str:
    servers = (data.get("identity") or {}).get("servers") or []
    if not servers:
        return ""
    body = "".join(f"<tr class='{_e(s['verdict'])}'><td>{_e(s['label'])}</td>"
                   f"<td>{_e(s['worker'])}</td><td class=mono>{_e(s['url'])}</td><td>{len(s['prompts_at_c1'])}</td>"
                   f"<td>{len(s['checks'])}</td><td class=mono>{_e(', '.join(s['failed']) or '-')}</td>"
                   f"<td>{_e(s['verdict'])}</td></tr>" for s in servers)
    return ("<h2>Servers</h2><table><tr><th>server</th><th>worker</th><th>url</th><th>prompts at c1</th><th>checks</th>"
            f"<th>failed</th><th>verdict</th></tr>{body}</table>")


def _evidence(data: dict) -> str:
    parts = []
    given = data.get("evidence")
    if given:
        rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v if isinstance(v, str) else ', '.join(v))}</td></tr>"
                       for k, v in given.items() if k != "family")
        parts.append(f"<p><b>evidence the server gave</b></p><table>{rows}</table>")
    cache = data.get("cache")
    if cache:
        parts.append(f"<p><b>cache-zero: {_e(cache.get('verdict'))}</b> · {_e(cache.get('requests_with_cache_field'))}"
                     f"/{_e(cache.get('requests'))} requests carried a cached-token count · counter deltas "
                     f"<code>{_e(json.dumps(cache.get('counter_deltas')))}</code></p>")
    spec = data.get("speculation") or {}
    if spec.get("drafted") is not None:
        rate = f", rate {spec['rate']:.1%}" if spec.get("rate") is not None else ""
        mal = (f", mean accepted length {spec['mean_accepted_length']:.2f}"
               if spec.get("mean_accepted_length") is not None else "")
        per_pos = (", accepted per draft position " + ", ".join(f"{v:g}" for v in spec["accepted_per_position"])
                   if spec.get("accepted_per_position") else "")
        parts.append(f"<p><b>speculation</b>: drafted {spec['drafted']:g}, accepted {spec.get('accepted') or 0:g}"
                     f"{_e(rate)}{_e(mal)}{_e(per_pos)} (from {_e(spec.get('source'))})</p>")
    checks = "".join(f"<tr class='{_e(c['verdict'])}'><td class=mono>{_e(c['id'])}</td><td>{_e(c['verdict'])}</td>"
                     f"<td>{_e(c.get('outcome') or 'pending')}</td><td>{_e(c['detail'])}</td></tr>"
                     for c in data.get("checks", []))
    parts.append(f"<table><tr><th>check</th><th>verdict</th><th>outcome</th><th>detail</th></tr>{checks}</table>")
    return "".join(parts)


def _logits(data: dict) -> str:
    """KLD / Same top p rows (overall, the reference's floor, per prompt); empty without a logits comparison."""
    logits = data.get("logits") or {}
    rows = []
    if logits.get("overall"):
        rows.append(("overall", logits["overall"]))
    floor = logits.get("floor") or {}
    if floor.get("overall"):
        rows.append((f"reference floor: {floor['dtype']} vs {floor['reference_dtype']}", floor["overall"]))
    rows += list((logits.get("per_prompt") or (floor.get("per_prompt") if "overall" not in logits else {}) or {}).items())
    if not rows:
        return ""
    body = "".join(
        f"<tr><td class=mono>{_e(name)}</td><td>{s['positions']}</td><td>{s['mean_kld']:.6f} ± "
        f"{s['mean_kld_uncertainty']:.6f}</td><td>{100 * s['same_top1']:.3f} %</td>"
        f"<td>{100 * s['rms_delta_p']:.3f} %</td></tr>" for name, s in rows if s.get("positions"))
    method = (logits.get("method") or {}).get("teacher_forced") or floor.get("method") or ""
    return ("<h2>Logits</h2><p>Mean KLD is a <b>lower bound</b> (shared top-k + one tail bucket). "
            f"{_e(method)}</p><table><tr><th></th><th>positions</th><th>Mean KLD</th><th>Same top p</th>"
            f"<th>RMS Δp</th></tr>{body}</table>")


def render_html(data: dict) -> str:
    columns, cells = grid(data)
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>oracle {_e(data.get('mode'))}: {_e(data.get('verdict'))}</title><style>{PAGE_CSS}</style></head><body>"
            f"{_header(data)}{_servers(data)}<h2>Verdict grid</h2>{_grid_html(columns, cells)}"
            f"<h2>Splits</h2>{_splits_html(columns, cells)}<h2>Plots</h2>{_plots(data, cells)}"
            f"{_logits(data)}{speed_html(data.get('speed'), data.get('speculation'))}{coverage_html(data)}<h2>Canaries</h2>{_canaries(data)}<h2>Checks, cache and speculation evidence</h2>{_evidence(data)}"
            f"{_notes(data)}<p><small>written {_e(data.get('written_utc'))} · schema {_e(data.get('schema_version'))}</small></p>"
            "</body></html>\n")
