"""The sampled-decoding section: the settings, why there are no near-ties, the token match rate per condition with
its Wilson interval, and the distribution check's statistics with its power statement (docs/sampling.md).

    lines = markdown(data); page = html(data)
"""

from __future__ import annotations

from oracle.compare.confidence import count_words
from oracle.report.page import e

__all__ = ["PLACE", "html", "markdown"]

PLACE = 60  # page order (report/sections.py): sampled decoding: settings, token match rates, the distribution check

NO_NEAR_TIES = ("Near-tie classification does not apply under sampling: with the same settings and seed a split "
                "is divergent (a sampled token is a draw, not an argmax a small margin can excuse).")


def _settings(data: dict) -> str:
    s = data["sampling"]["settings"]
    return (f"temperature {s['temperature']:g}, top-p {s['top_p']:g}, seeds {', '.join(map(str, s['seeds']))} "
            f"(top_k {s['top_k']}, min_p {s['min_p']:g}: nothing else shapes the sampler); check: "
            f"{data['sampling'].get('check', 'tokens')}")


def _match_rows(data: dict) -> list[tuple[str, str, str, str]]:
    """(condition, against, matched/compared with interval, exact records) per row."""
    rows = []
    for condition, sides in (data.get("token_match") or {}).items():
        for side, m in sides.items():
            rows.append((condition, side.removeprefix("vs_").replace("_", " "), count_words(m["k"], m["n"]),
                         f"{m['exact_records']}/{m['records']}"))
    return rows


def _distribution_lines(d: dict) -> list[str]:
    ll, hist = d["mean_loglik"], d["rank_histogram"]
    return [f"verdict **{d['verdict']}** (--max-shift {d['max_shift']:g} nats/token)",
            f"mean per-token log-likelihood under the reference model: candidate {ll['candidate']}, reference "
            f"{ll['reference']}; effect {d['effect_nats_per_token']} nats/token (Cohen's d {d['effect_size_d']})",
            f"permutation tests over whole sequences ({d['permutations']}), each at {d['per_test_alpha']:g}: "
            f"p {d['p_value_loglik']} (mean log-likelihood), p {d['p_value_ranks']} (rank histogram)",
            f"rank in the reference's top-{d['scored_by']['top_k'] if d.get('scored_by') else 'k'} "
            f"{', '.join(hist['bins'])}: reference {hist['reference']}, candidate {hist['candidate']}",
            d.get("power_statement", "")]


def markdown(data: dict) -> list[str]:
    if not data.get("sampling"):
        return []
    out = ["", "## Sampled decoding", "", _settings(data), "", NO_NEAR_TIES]
    rows = _match_rows(data)
    if rows:
        out += ["", "Token match rate (tokens generated from the same prefix that came out the same, Wilson 95%):", "",
                "| condition | against | matched / compared | exact records |", "| --- | --- | --- | --- |"]
        out += [f"| {c} | {a} | {m} | {x} |" for c, a, m, x in rows]
    dist = data["sampling"].get("distribution")
    if dist:
        out += ["", "Distribution check:", ""] + [f"- {line}" for line in _distribution_lines(dist)]
    return out


def html(data: dict) -> str:
    if not data.get("sampling"):
        return ""
    parts = [f"<h2>Sampled decoding</h2><p>{e(_settings(data))}</p><p>{e(NO_NEAR_TIES)}</p>"]
    rows = _match_rows(data)
    if rows:
        parts.append("<table><tr><th>condition</th><th>against</th><th>matched / compared</th><th>exact records</th>"
                     "</tr>" + "".join(f"<tr><td>{e(c)}</td><td>{e(a)}</td><td>{e(m)}</td><td>{e(x)}</td></tr>"
                                      for c, a, m, x in rows) + "</table>")
    dist = data["sampling"].get("distribution")
    if dist:
        parts.append("<ul>" + "".join(f"<li>{e(line.replace('**', ''))}</li>" for line in _distribution_lines(dist))
                     + "</ul>")
    return "".join(parts)
