"""The speed card in the report: the headline's speed part and the card's section in identity.md / .html.

    headline(card)         # '1.42x faster [1.31, 1.55] (conventional decode median 177.3 vs 124.9 tok/s, ...)'
    markdown(data)         # the section from the identity.json dict: label, summary over prompts, per prompt
    html(data)             # rows, the comparison (markdown_lines / html_section: the same from the card itself)
"""

from __future__ import annotations

from html import escape

from oracle.speed.card import FIGURES
from oracle.speed.interleave import BETWEEN_RUN, FIGURE_WORDS, WITHIN_RUN
from oracle.speed.noise import percent, ratio_words, same_speed
from oracle.speed.sequential import path_words, verdict_words
from oracle.speed.versus import RECORDED_ELSEWHERE
from oracle.speed.validity import NOT_COMPARABLE, NOT_CREDIBLE

__all__ = ["PLACE", "band_words", "comparison_words", "credible_lines", "headline", "html", "html_section", "markdown",
           "markdown_lines", "not_judged_words", "power_lines", "speculation_words", "speed_words"]

PLACE = 70  # page order (report/sections.py): the speed card

FIGURE_NAMES = {"conventional_tok_s": "conventional decode rate 99/(t100-t1), tok/s", "ttft_s": "TTFT, s",
                "after_ttft_tok_s": "after-TTFT throughput (n-1)/(tn-t1), tok/s",
                "full_output_tok_s": "full-output throughput n/tn, tok/s",
                "event_rate": "event-counting rate (stream events, not tokens), events/s"}


def _way(versus: dict) -> str:
    """'1.42x faster', or `same speed (0.99x, within the measured noise +-2.1%)` when the point lies within the
    comparison's noise band of 1.0."""
    point, band = versus["median"], versus.get("noise")
    if band and band.get("measured") and same_speed(point, band) and not same_speed(point, None):
        return f"same speed ({point:.4g}x, within the measured noise +-{percent(band['fraction'])})"
    return ratio_words(point)


def speed_words(versus: dict) -> str:
    """'1.42x faster [1.31, 1.55] (conventional decode median 177.3 vs 124.9 tok/s, 11 prompts, headline)'; an
    interleaved comparison shows the terms its ratio is of, the geometric means over the rounds of each pass's
    median: '0.52x slower [0.49, 0.55] (post-first decode geometric mean 60.1 vs 115.3 tok/s over 4 rounds
    interleaved, headline)'. Over prompts, the ratio is the median of the per-prompt ratios; where the medians shown
    would give another ratio, that definition is printed beside them."""
    lo, hi = versus["ci95"]
    way = _way(versus)
    label = _label_words(versus)
    if versus.get("interval") == BETWEEN_RUN:
        figure = FIGURE_WORDS.get(versus.get("figure"), "decode").split(" ")
        cand = versus.get("candidate_geomean") or versus["candidate_median"]
        ref = versus.get("reference_geomean") or versus["reference_median"]
        return (f"{way} [{lo:.2f}, {hi:.2f}] ({' '.join(figure[:-1]) or 'decode'} geometric mean "
                f"{cand:.1f} vs {ref:.1f} tok/s over {versus['rounds']} rounds interleaved, {label})")
    cand, ref = versus["candidate_median"], versus["reference_median"]
    defined = ("median of the per-prompt ratios; " if ref and f"{cand / ref:.2f}" != f"{versus['median']:.2f}"
               else "")
    return (f"{way} [{lo:.2f}, {hi:.2f}] ({defined}conventional decode median "
            f"{cand:.1f} vs {ref:.1f} tok/s, {versus['prompts']} prompts, {label})")


def _label_words(versus: dict) -> str:
    """The comparison's label; a reference recorded while not isolated says so: `not headline: <why>`."""
    why = versus.get("not_headline")
    return f"{versus['label']}; not headline: {why}" if why else versus["label"]


def band_words(band: dict) -> str:
    """'noise band +-3.7% (the A/A control (--speed-control): ...)': what --min-speedup judges inside."""
    return f"noise band +-{percent(band['fraction'])} ({band['source']})"


def not_judged_words(checks: list[dict]) -> str | None:
    """'speed not judged: <reason>' when the run's only failures are inconclusive speed items (a gate that failed
    for nothing but a speed it could not judge says so in its headline); None otherwise."""
    failed = [c for c in checks if c.get("outcome") == "failed"]
    if not failed or any(c.get("verdict") != "inconclusive" or c.get("kind") != "speed" for c in failed):
        return None
    why = (failed[0].get("evidence") or {}).get("not_judged") or failed[0].get("detail") or "no reason given"
    return f"speed not judged: {why}"


def comparison_words(versus: dict, recorded: bool = False) -> tuple[str, str]:
    """(title, sentence) of a comparison in the card: the interleaved one (between-run interval over rounds) or one
    against the reference's recording (reference measured in another run: within-run interval over prompts)."""
    between = versus.get("interval") == BETWEEN_RUN
    title = ("Against the reference, interleaved in this session" if between
             else f"Against the {'recorded ' if recorded else ''}reference ({RECORDED_ELSEWHERE})")
    if versus.get("median") is None:
        return title, f"{versus['label']}."
    if between:
        return title, (f"{speed_words(versus)}; per-round ratio min {versus['min']:.2f}, max {versus['max']:.2f} "
                       f"(Student t 95% interval over {versus['rounds']} paired ABBA rounds: {BETWEEN_RUN}).")
    return title, (f"{speed_words(versus)}; per-prompt ratio min {versus['min']:.2f}, max {versus['max']:.2f} "
                   f"(bootstrap 95% interval of the median over prompts: {WITHIN_RUN}).")


def _comparisons(card: dict) -> list[tuple[str, str, dict]]:
    return [(*comparison_words(v, key == "vs_recorded_reference"), v)
            for key in ("vs_reference", "vs_recorded_reference") for v in [card.get(key)] if v is not None]


def headline(card: dict | None) -> str | None:
    """The headline's speed part: the comparison, or the card alone, or why there is no number."""
    if not card:
        return None
    versus = card.get("vs_reference")
    if versus is not None:
        if versus.get("median") is not None and versus["label"] != NOT_COMPARABLE:
            return speed_words(versus)
        if versus.get("not_headline"):
            return f"speed {_label_words(versus)}"
        return f"speed {versus['label']} ({(versus.get('reasons') or ['no comparison'])[0]})"
    if card["label"] == NOT_CREDIBLE:
        return f"speed {NOT_CREDIBLE} ({card['reasons'][0]})"
    conv = (card.get("summary") or {}).get("conventional_tok_s")
    if not conv:
        return f"speed {card['label']} (no prompt reached {card['min_tokens']} tokens)"
    return f"conventional decode median {conv['median']:.1f} tok/s ({conv['prompts']} prompts, {card['label']})"


def speculation_words(spec: dict | None) -> str | None:
    """Acceptance beside the speed: a speculative config can keep the text right while acceptance drops to ~0%
    (graph capture, a broken draft), and then it is not faster for the reason it claims."""
    if not spec or spec.get("drafted") is None:
        return None
    rate = f"acceptance {spec['rate']:.1%}" if spec.get("rate") is not None else "acceptance unknown"
    mal = (f", mean accepted length {spec['mean_accepted_length']:.2f}"
           if spec.get("mean_accepted_length") is not None else "")
    return f"{rate}{mal} (drafted {spec['drafted']:g}, accepted {spec.get('accepted') or 0:g})"


def credible_lines(card: dict) -> list[str]:
    """The timestamps' evidence in words: what was checked and held, and what was not checked (what contradicted
    the client's clock is among the card's reasons)."""
    block = card.get("credible")
    if not block:
        return ["timestamps: not checked (a card from an older oracle)"]
    lines = [f"timestamps: {block['verdict']}"]
    stream, timings, counters = block["stream"], block["timings"], block["counters"]
    if stream["judged"] and not stream["bursts"]:
        lines.append(f"stream: every completion's tokens arrived spread over its time (lowest arrival spread "
                     f"{stream['lowest_spread']:.3g} >= {block['min_spread']:g}, {stream['judged']} completions)")
    if timings["judged"] and not timings["faster_than_server"]:
        lines.append(f"server timings agree: client / server decode rate at most {timings['highest_ratio']:.3g} "
                     f"(tolerance {1 + block['rate_tolerance']:.2f}, {timings['judged']} completions)")
    if counters and not counters["contradicts"]:
        lines.append(f"counters moved: the server generated {counters['generated']} token(s), the client received "
                     f"{counters['received']}")
    return lines + [f"not checked: {g}" for g in block["not_checked"]] + [f"note: {n}" for n in block["notes"]]


def power_lines(card: dict) -> list[str]:
    """Isolation, energy, temperature and clocks of the timed run in words (nothing for a card from before them)."""
    lines = []
    iso = card.get("isolation")
    if iso:
        if iso["verdict"] == "isolated":
            bar = (f" at >= {iso['cpu_share']:.0%} of a core" if "cpu_share" in iso else "")
            lines.append(f"isolation: isolated (no other process on the {iso.get('device_name') or iso['device']}{bar} over the run; "
                         f"{iso['method']}; the server's and oracle's own processes left out)")
        elif iso["verdict"] == "not checked":
            lines.append(f"isolation: not checked ({iso.get('reason')})")
        else:
            lines.append(f"isolation: {iso['reason']} ({iso['method']})")
    power = card.get("power")
    if power:
        if power.get("servers"):
            power = power["servers"][0]
        if power.get("joules") is not None:
            per = (f", {power['joules_per_token']:.4g} J per generated token (prefill included)"
                   if power.get("joules_per_token") is not None else "")
            lines.append(f"power: {power['joules']:.4g} J over {power['window_s']:.3g} s ({power['watts_mean']:.4g} W "
                         f"mean){per}; {power['chosen']}")
        else:
            lines.append(f"power: {power.get('reason')}" + (f"; {power['chosen']}" if power.get("chosen") else ""))
        for m in power.get("meters") or []:
            if not m.get("available"):
                continue
            extra = [f"{k} {m[k]:g}" for k in ("temperature_c_max", "clock_mhz_min", "clock_mhz_max",
                                               "power_w_max", "sm_clock_mhz_min", "sm_clock_mhz_max") if k in m]
            where = " ".join(str(m[k]) for k in ("device", "name", "pci") if m.get(k))
            lines.append(f"meter {m['source']}{' ' + where if where else ''}: {m['joules']:g} J"
                         + (f", {', '.join(extra)}" if extra else ""))
    return lines


def _tokens(warmup: dict) -> str:
    n = warmup.get("completion_tokens")
    return ", ".join(map(str, n)) if isinstance(n, list) else str(n)


def _num(x) -> str:
    return "-" if x is None else f"{x:g}" if isinstance(x, int) else f"{x:.4g}"


def markdown_lines(card: dict | None, speculation: dict | None = None) -> list[str]:
    if not card:
        return []
    lines = ["", f"## Speed card: {card['label']}", ""]
    lines += [f"- not a headline: {r}" for r in card["reasons"]]
    lines += [f"- {line}" for line in credible_lines(card) + power_lines(card)]
    spec = speculation_words(speculation)
    if spec:
        lines.append(f"- speculation: {spec}")
    lines.append(f"- token times: {card['token_times']}; the primary run ({card['condition']}), each prompt once")
    w = card.get("warmup") or {}
    lines.append(f"- warm-up: {w.get('requests', 0)} request(s)" + (f" of a fixed prompt outside the suite "
                                                                     f"({_tokens(w)} tokens)"
                                                                     if w.get("requests") else ""))
    if card["excluded"]:
        lines.append(f"- left out of the conventional rate (fewer than {card['min_tokens']} tokens): "
                     + ", ".join(f"{k} ({n})" for k, n in card["excluded"].items()))
    lines += ["", "| figure | median | p10 | mean | min | max | prompts |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for name in FIGURES:
        s = card["summary"].get(name)
        if s:
            lines.append(f"| {FIGURE_NAMES[name]} | {_num(s['median'])} | {_num(s['p10'])} | {_num(s['mean'])} | "
                         f"{_num(s['min'])} | {_num(s['max'])} | {s['prompts']} |")
    for title, said, versus in _comparisons(card):
        lines += ["", f"{title}: {said}"]
        if versus.get("launch"):
            lines.append(f"- launch: {versus['launch']}")
        if versus.get("noise"):
            lines.append(f"- {band_words(versus['noise'])}")
        if versus.get("sequential"):
            lines += [f"- {verdict_words(versus['sequential'])}", f"- {path_words(versus['sequential'])}"]
        lines += [f"- {r}" for r in versus.get("reasons") or []] + [f"- note: {n}" for n in versus.get("notes") or []]
    lines += ["", "| prompt | tokens | TTFT s | conventional tok/s | after-TTFT tok/s | full-output tok/s | "
                  "events | event rate (events/s) | arrival spread | server tok/s | client / server |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for k, v in card["prompts"].items():
        lines.append(f"| {k} | {v['tokens']} | {_num(v['ttft_s'])} | {_num(v['conventional_tok_s'])} | "
                     f"{_num(v['after_ttft_tok_s'])} | {_num(v['full_output_tok_s'])} | {v['events']} | "
                     f"{_num(v['event_rate'])} | {_num(v.get('arrival_spread'))} | "
                     f"{_num(v.get('server_decode_tok_s'))} | {_num(v.get('client_vs_server'))} |")
    return lines


def html_section(card: dict | None, speculation: dict | None = None) -> str:
    """The card as HTML: label and reasons, the summary table, the comparison, the per-prompt rows."""
    if not card:
        return ""
    e = lambda v: escape(str(v))  # noqa: E731
    reasons = "".join(f"<li>{e(r)}</li>" for r in card["reasons"])
    head = (f"<h2>Speed card: <span class='speed {e(card['label'].replace(' ', '-'))}'>{e(card['label'])}</span></h2>"
            + (f"<ul>{reasons}</ul>" if reasons else "")
            + (f"<p>speculation: {e(speculation_words(speculation))}</p>" if speculation_words(speculation) else "")
            + "".join(f"<p class=mono>{e(line)}</p>" for line in credible_lines(card) + power_lines(card))
            + f"<p>token times: {e(card['token_times'])} · warm-up: {e((card.get('warmup') or {}).get('requests', 0))} "
              f"request(s) · prompts left out of the conventional rate (under {card['min_tokens']} tokens): "
              f"{e(', '.join(f'{k} ({n})' for k, n in card['excluded'].items()) or 'none')}</p>")
    summary = "".join(
        f"<tr><td>{e(FIGURE_NAMES[name])}</td>" + "".join(f"<td>{e(_num(s[k]))}</td>" for k in
                                                          ("median", "p10", "mean", "min", "max", "prompts")) + "</tr>"
        for name in FIGURES for s in [card["summary"].get(name)] if s)
    table = ("<table><tr><th>figure</th><th>median</th><th>p10</th><th>mean</th><th>min</th><th>max</th>"
             f"<th>prompts</th></tr>{summary}</table>")
    compared = ""
    for title, said, versus in _comparisons(card):
        compared += (f"<p><b>{e(title)}:</b> {e(said)}</p>"
                    + (f"<p>launch: <span class=mono>{e(versus['launch'])}</span></p>" if versus.get("launch") else "")
                    + (f"<p>{e(band_words(versus['noise']))}</p>" if versus.get("noise") else "")
                    + (f"<p>{e(verdict_words(versus['sequential']))}</p><p class=mono>"
                       f"{e(path_words(versus['sequential']))}</p>" if versus.get("sequential") else "")
                    + "".join(f"<p class=mono>{e(r)}</p>" for r in (versus.get("reasons") or []) + (versus.get("notes") or [])))
    rows = "".join(f"<tr><td class=mono>{e(k)}</td><td>{v['tokens']}</td><td>{e(_num(v['ttft_s']))}</td>"
                   f"<td>{e(_num(v['conventional_tok_s']))}</td><td>{e(_num(v['after_ttft_tok_s']))}</td>"
                   f"<td>{e(_num(v['full_output_tok_s']))}</td><td>{v['events']}</td><td>{e(_num(v['event_rate']))}</td>"
                   + "".join(f"<td>{e(_num(v.get(x)))}</td>" for x in ("arrival_spread", "server_decode_tok_s",
                                                                       "client_vs_server")) + "</tr>"
                   for k, v in card["prompts"].items())
    per_prompt = ("<table><tr><th>prompt</th><th>tokens</th><th>TTFT s</th><th>conventional tok/s</th>"
                  "<th>after-TTFT tok/s</th><th>full-output tok/s</th><th>events</th>"
                  "<th>event-counting rate (events/s, not tokens)</th><th>arrival spread</th><th>server tok/s</th>"
                  f"<th>client / server</th></tr>{rows}</table>")
    return head + table + compared + per_prompt


def _card(data: dict) -> dict | None:
    """The card of identity.json's `speed` (None when it holds only the cells, shown by speed/cells_report.py)."""
    card = data.get("speed")
    return card if card and "label" in card else None


def markdown(data: dict) -> list[str]:
    return markdown_lines(_card(data), data.get("speculation"))


def html(data: dict) -> str:
    return html_section(_card(data), data.get("speculation"))
