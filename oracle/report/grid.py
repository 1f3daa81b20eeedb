"""The conditions section: the verdict grid (a row per prompt, a column per condition: the reference or c1,
each ladder level, each later boot; a labelled cell each), the split viewer for every non-exact cell, plots of
first-divergence positions, achieved overlap and throughput; in identity.md, the determinism class and a row per
ladder level and boot.

    columns, cells = grid(data)   # what the page's grid shows
    lines = markdown(data); page = html(data)
"""

from __future__ import annotations

from typing import Iterable

from oracle.compare.conditions import first_split, verdict_rank
from oracle.compare.confidence import count_words, interval_words
from oracle.compare.near_ties import density_words
from oracle.compare.noise import DETERMINISM_WORDS
from oracle.report.page import e, hover as count_hover, title

__all__ = ["PLACE", "grid", "html", "markdown"]

PLACE = 20  # page order (report/sections.py): the verdict grid, splits and plots; the ladder levels and boots


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
                        "hover": f"exact {exact['k']}/{exact['n']}, {count_hover(exact)}" if key == "reference" and exact
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
        summary = ((data.get("ladder") or {}).get(title) or (data.get("boots") or {}).get(title.removeprefix("boot "))
                   or {})
        tok_s = (summary.get("speed") or {}).get("throughput_tok_s")
        note += f" · {tok_s:.0f} tok/s" if tok_s else ""
        flips, density = _flips_cell(summary.get("splits"))
        note += f" · tie/confident flips {flips}, near-tie positions {density}" if summary.get("splits") else ""
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


def _grid_html(columns: list[dict], cells: dict[str, dict[str, dict]]) -> str:
    head = "".join(f"<th{title(c.get('hover'))}>{e(c['title'])}<br><small>{e(c['note'])}</small></th>"
                   for c in columns)
    body = []
    for pid, row in cells.items():
        tds = []
        for c in columns:
            cell = row.get(c["key"])
            if cell is None:
                tds.append("<td class=cell>-</td>")
                continue
            label = e(cell["label"])
            if cell.get("split"):
                label = f"<a href='#{_cell_id(pid, c['key'])}'>{label}</a>"
            tds.append(f"<td class='cell {e(cell['verdict'])}' data-verdict='{e(cell['verdict'])}'"
                       f"{title(cell.get('hover'))}>{label}</td>")
        body.append(f"<tr data-prompt='{e(pid)}'><th class=mono>{e(pid)}</th>{''.join(tds)}</tr>")
    return (f"<table class=grid><thead><tr><th>prompt</th>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def _top_table(top: list) -> str:
    if not top:
        return "<p><small>no logprobs at the split</small></p>"
    rows = "".join(f"<tr><td class=mono>{e(repr(t[2]))}</td><td class=mono>#{e(t[0])}</td><td>{t[1]:.4f}</td></tr>"
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
                inner = f"<p>same tokens, finish reason {e(against)} {e(ref.get('finish'))} vs {e(cand.get('finish'))}</p>"
            else:
                inner = (f"<p>first divergence at token {split['position']}; shared text before it:</p>"
                         f"<pre class=mono>{e(split.get('shared_text'))}</pre>"
                         f"<div class=side><b>{e(against)}</b> ({e(ref.get('length'))} tokens, finish "
                         f"{e(ref.get('finish'))})<pre class=mono>{e(ref.get('text'))}</pre>"
                         f"<small class=mono>{e(ref.get('ids'))}</small>{_top_table(ref.get('top'))}</div>"
                         f"<div class=side><b>{e('candidate' if c['key'] == 'reference' else c['title'])}</b> "
                         f"({e(cand.get('length'))} tokens, finish "
                         f"{e(cand.get('finish'))})<pre class=mono>{e(cand.get('text'))}</pre>"
                         f"<small class=mono>{e(cand.get('ids'))}</small>{_top_table(cand.get('top'))}</div>")
            # Closed by default (a large report stays fast to lay out); a cell's link opens it, since the
            # link's target sits inside the details.
            out.append(f"<details><summary><b>{e(pid)}</b> · {e(c['title'])}: {e(cell['label'])}</summary>"
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
        rows.append(f"<text x='0' y='{y + 13}' font-size='12'>{e(label)}</text>"
                    f"<rect x='110' y='{y}' width='{w}' height='{h}' fill='#7a9cc6'/>"
                    f"<text x='{116 + w}' y='{y + 13}' font-size='12'>{e(extra or f'{value:g} {unit}')}</text>")
    total_h = len(bars) * (h + 4)
    return (f"<h3>{e(title)}</h3><svg width='{width + 260}' height='{total_h}' "
            f"role='img' aria-label='{e(title)}'>{''.join(rows)}</svg>")


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


def html(data: dict) -> str:
    columns, cells = grid(data)
    vs_reference = " ".join(_reference_splits(data)).strip()
    return (f"<h2>Verdict grid</h2>{f'<p>{e(vs_reference)}</p>' if vs_reference else ''}{_grid_html(columns, cells)}"
            f"<h2>Splits</h2>{_splits_html(columns, cells)}"
            f"<h2>Plots</h2>{_plots(data, cells)}")


def _tok_s(x) -> str:
    return "-" if x is None else f"{x:.1f}"


def _flips_cell(d: dict | None) -> tuple[str, str]:
    """(tie / confident flips, near-tie positions) of a condition's split density; '-' for a report without."""
    if not d:
        return "-", "-"
    flips = f"{d['tie_flips']} / {d['confident_flips']}" + (f" (+{d['unmeasured_flips']} ?)"
                                                            if d.get("unmeasured_flips") else "")
    if not d["positions"]:
        return flips, "not measured"
    return flips, f"{d['near_tie_positions']}/{d['positions']} ({100 * d['near_tie_positions'] / d['positions']:.1f}%)"


def _reference_splits(data: dict) -> list[str]:
    """The tokens summary against the reference with its split density."""
    s = data.get("summary") or {}
    if not s.get("splits") or data.get("mode") != "gate":
        return []
    exact = s.get("exact") or [0, 0]
    return ["", f"Splits vs the reference: {exact[0]}/{exact[1]} exact, {s.get('near_tie', 0)} near-tie, "
                f"{s.get('divergent', 0)} divergent; {density_words(s['splits'])} (the primary run's positions "
                "with a top-2 margin below it)."]


def markdown(data: dict) -> list[str]:
    ladder, boots = data.get("ladder") or {}, data.get("boots") or {}
    if not (ladder or boots):
        return _reference_splits(data)
    rows = [(level, v) for level, v in ladder.items()] + [(f"boot {b}", v) for b, v in boots.items()]
    on = any("server" in v for _, v in rows)  # several servers: say which one ran each condition
    nats = next((v["splits"]["near_tie_nats"] for _, v in rows if v.get("splits")), None)
    lines = _reference_splits(data) + [
        "", f"Determinism: {DETERMINISM_WORDS[data['determinism']]}.", "",
        "| condition | exact (Wilson 95%) | near-tie | within noise | divergent | required | overlap | verdict | first divergences |"
        " tie / confident flips | near-tie positions | throughput tok/s | median request tok/s |" + (" server |" if on else ""),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if on else "")]
    for name, v in rows:
        c = v["counts"]
        ov = v.get("overlap")
        overlap = f"{ov['reached']}/{ov['asked']}" + (f" (server {ov['server_peak']})" if ov.get("server_peak") is not None
                                                      else "") if ov else "-"
        firsts = ", ".join(map(str, v["first_divergences"][:8])) or "-"
        sp = v.get("speed") or {}  # ladder levels only; boots have none
        flips, density = _flips_cell(v.get("splits"))
        lines.append(f"| {name} | {count_words(c['exact'], v['records'])} | {c['near-tie']} | {c['within-reference-noise']} | "
                     f"{c['divergent']} | {v['required']} | {overlap} | {v['verdict']} | {firsts} | {flips} | {density} | "
                     f"{_tok_s(sp.get('throughput_tok_s'))} | {_tok_s(sp.get('median_conventional_tok_s'))} |"
                     + (f" {v.get('server', '-')} |" if on else ""))
    if nats is not None:
        lines += ["", f"Tie flips: splits whose margin at the split is below {nats:g} nats (--near-tie-nats); "
                      "near-tie positions: the condition's positions whose top-2 margin is below it."]
    return lines
