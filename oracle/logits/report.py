"""The logits section of the report: llama.cpp's figures per prompt and overall, the reference's floor
beside them, the method per backend, and (identity.md) the positions with the largest KLD.

    lines = markdown(data)   # identity.md's section, from the identity.json dict
    page = html(data)        # identity.html's section; "" without a logits comparison
"""

from __future__ import annotations

from html import escape

__all__ = ["PLACE", "headline", "html", "markdown", "markdown_lines"]

PLACE = 30  # page order (report/sections.py): KLD / Same top p against the reference, or the reference's floor


def _e(value) -> str:
    return escape("" if value is None else str(value))


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.3f} %"


def _row(name: str, s: dict) -> str:
    if not s.get("positions"):
        return f"| {name} | 0 | - | - | - | - | - | - | - | - | - | - |"
    p = s["kld_percentiles"]
    cos = "-" if s.get("logprob_cosine") is None else f"{s['logprob_cosine']:.5f}"
    logit = "-" if s.get("logit_cosine") is None else f"{s['logit_cosine']:.6f} ({s['logit_cosine_ids']} ids)"
    raw = "-" if s.get("logit_cosine_raw") is None else f"{s['logit_cosine_raw']:.6f}"
    lp_c = "-" if s.get("mean_logprob_candidate") is None else f"{s['mean_logprob_candidate']:.4f}"
    lp_r = "-" if s.get("mean_logprob_reference") is None else f"{s['mean_logprob_reference']:.4f}"
    return (f"| {name} | {s['positions']} | {s['mean_kld']:.6f} ± {s['mean_kld_uncertainty']:.6f} | "
            f"{p['max']:.5f} / {p['p99']:.5f} / {p['median']:.6f} | "
            f"{100 * s['same_top1']:.3f} ± {100 * s['same_top1_uncertainty']:.3f} % | "
            f"{_pct(s['mean_delta_p'])} | {_pct(s['rms_delta_p'])} | {cos} | {logit} | {raw} | {lp_r} | {lp_c} |")


def headline(logits: dict | None) -> str | None:
    overall = (logits or {}).get("overall")
    if not overall or not overall.get("positions"):
        return None
    return (f"Mean KLD {overall['mean_kld']:.6f} (lower bound), Same top p {100 * overall['same_top1']:.2f} % "
            f"over {overall['positions']} positions")


def markdown_lines(logits: dict | None) -> list[str]:
    if not logits:
        return []
    head = ["| | positions | Mean KLD | KLD max / 99% / median | Same top p | mean Δp | RMS Δp | logprob cosine "
            "| logit cosine (centered, over) | logit cosine (raw) | mean log-prob ref | mean log-prob cand |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    floor = logits.get("floor")
    lines = ["", "## Logits against the reference", ""]
    if "overall" in logits:
        m = logits["method"]
        lines += [f"KLD is KL(reference ‖ candidate) over the tokens in both top-k sets (reference top "
                  f"{logits.get('reference_top_k')}, candidate top {logits.get('candidate_top_k')}) with the rest of "
                  "each distribution in one tail bucket: **a lower bound** of the full-vocabulary KLD. "
                  "Same top p: share of positions where both sides' most likely token agrees.", "",
                  f"Along the reference path: {m['positions_from_generation']} positions from the gated generation "
                  f"(on the reference path up to its first split), {m['positions_teacher_forced']} teacher-forced "
                  f"by **{m['backend']}**: {m['teacher_forced'] or 'no teacher-forced method'}"
                  + (f"; {m['requests']} diagnostic requests, {m['cached_prompt_tokens']} prompt tokens from the "
                     "server's cache (apart from the gated run and its cache-zero evidence)"
                     if m.get("cached_prompt_tokens") is not None else "")
                  + (f"; {m['positions_missing']} positions without candidate logprobs" if m["positions_missing"]
                     else "") + ".", ""]
        lines += head + [_row("**overall**", logits["overall"])]
        if floor and floor.get("overall"):
            lines.append(_row(f"reference floor: {floor['dtype']} vs {floor['reference_dtype']}", floor["overall"]))
        for pid, s in logits["per_prompt"].items():
            split = s.get("greedy_split")
            lines.append(_row(f"{pid} ({'greedy identical' if split is None else f'greedy split @{split}'})", s))
        for pid, err in (logits.get("errors") or {}).items():
            lines.append(f"| {pid} | not compared: {err} | | | | | | | | |")
        top = logits.get("top_positions") or []
        if top:
            lines += ["", "Largest KLD positions:", "", "| prompt | position | KLD | reference token (p) | "
                      "candidate top-1 | Δp | context before |", "| --- | --- | --- | --- | --- | --- | --- |"]
            for t in top:
                ctx = t["context"].replace("|", "\\|").replace("\n", "⏎")
                lines.append(f"| {t['prompt']} | {t['position']} | {t['kld']:.5f} | `{t['reference_text']!r}` "
                             f"({t['p_reference']:.3f}) | `{t['candidate_top1_text']!r}` | {100 * t['delta_p']:+.2f} % "
                             f"| …{ctx[-60:]} |")
    elif floor and floor.get("overall"):
        lines += [f"The reference's own precision floor: the same weights in {floor['dtype']}, teacher-forced along "
                  f"this {floor['reference_dtype']} reference path ({floor.get('method')}). Gates against this "
                  "reference show it beside the candidate's figures.", ""]
        lines += head + [_row("**overall**", floor["overall"])]
        lines += [_row(pid, s) for pid, s in floor["per_prompt"].items()]
    return lines


def markdown(data: dict) -> list[str]:
    return markdown_lines(data.get("logits"))


def html(data: dict) -> str:
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
