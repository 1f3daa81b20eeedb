"""identity.md: the headline verdict, identity, canaries, conditions, logits, speculation and every check."""

from __future__ import annotations

from oracle.canary.context import context_words
from oracle.canary.results import markdown_lines as canary_markdown_lines
from oracle.compare.conditions import headline_counts
from oracle.compare.confidence import count_words
from oracle.compare.noise import DETERMINISM_WORDS, NOT_WITHIN_BOOT
from oracle.logits.report import headline as logits_headline, markdown_lines as logits_markdown_lines
from oracle.report.state import ReportState
from oracle.run.coverage_report import markdown as coverage_markdown
from oracle.speed.report import headline as speed_headline, markdown_lines as speed_markdown_lines

__all__ = ["markdown"]


def _reference_unstable(data: dict) -> bool:
    return (data.get("reference") or {}).get("determinism") == NOT_WITHIN_BOOT


def _headline(state: ReportState, data: dict) -> str:
    s = data["summary"]
    verdict = data["verdict"].upper()
    logits = logits_headline(state.logits)
    tokens_gated = any(c.kind == "tokens" for c in state.checks) or not logits
    if state.mode == "gate" and not tokens_gated:
        head = f"{verdict}: {logits}"
    elif state.mode == "gate":
        head = (f"{verdict}: the reference is not deterministic run to run, so no token-exactness claim; "
                f"{s['exact'][0]}/{s['exact'][1]} matched it" if _reference_unstable(data)
                else f"{verdict}: {s['exact'][0]}/{s['exact'][1]} exact")
    else:
        head = f"{verdict}: {s['records'][0]}/{len(state.prompt_ids)} recorded"
    extra = headline_counts(state.ladder, state.boots)
    if logits and tokens_gated and state.mode == "gate":
        extra = [logits] + extra
    speed = speed_headline(state.speed)
    if speed:
        extra = [speed] + extra
    return head + (" · " + " · ".join(extra) if extra else "")


def _tok_s(x) -> str:
    return "-" if x is None else f"{x:.1f}"


def _condition_lines(state: ReportState) -> list[str]:
    if not (state.ladder or state.boots):
        return []
    rows = [(level, v) for level, v in state.ladder.items()] + [(f"boot {b}", v) for b, v in state.boots.items()]
    on = any("server" in v for _, v in rows)  # several servers: say which one ran each condition
    lines = ["", f"Determinism: {DETERMINISM_WORDS[state.determinism]}.", "",
             "| condition | exact (Wilson 95%) | near-tie | within noise | divergent | required | overlap | verdict | first divergences |"
             " throughput tok/s | median request tok/s |" + (" server |" if on else ""),
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if on else "")]
    for name, v in rows:
        c = v["counts"]
        ov = v.get("overlap")
        overlap = f"{ov['reached']}/{ov['asked']}" + (f" (server {ov['server_peak']})" if ov.get("server_peak") is not None
                                                      else "") if ov else "-"
        firsts = ", ".join(map(str, v["first_divergences"][:8])) or "-"
        sp = v.get("speed") or {}  # ladder levels only; boots have none
        lines.append(f"| {name} | {count_words(c['exact'], v['records'])} | {c['near-tie']} | {c['within-reference-noise']} | "
                     f"{c['divergent']} | {v['required']} | {overlap} | {v['verdict']} | {firsts} | "
                     f"{_tok_s(sp.get('throughput_tok_s'))} | {_tok_s(sp.get('median_conventional_tok_s'))} |"
                     + (f" {v.get('server', '-')} |" if on else ""))
    return lines


def _confidence_line(summary: dict) -> list[str]:
    """'- Wilson 95% intervals: exact 11/12 (0.65–0.99) · boots 2/2 (0.34–1.00) · canaries code 3/14 (0.08–0.48)'."""
    conf = summary.get("confidence") or {}
    words = lambda c: count_words(c["k"], c["n"])  # noqa: E731
    parts = [f"exact {words(conf['exact'])}"] if conf.get("exact", {}).get("n") else []
    if conf.get("boots"):
        parts.append(f"boots {words(conf['boots'])}")
    parts += [f"canaries {family} {words(c)}" for family, c in (conf.get("canaries") or {}).items()]
    if conf.get("servers_c1"):
        parts.append(f"c1 identical on two servers {words(conf['servers_c1'])}")
    return [f"- Wilson 95% intervals: {' · '.join(parts)}"] if parts else []


def _server_lines(ident: dict) -> list[str]:
    servers = ident.get("servers") or []
    if not servers:
        return []
    lines = ["", f"Servers ({len(servers)}, one pytest-xdist worker each; their own reports in `servers/`):", "",
             "| server | worker | url | prompts at c1 | checks | failed | verdict |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in servers:
        lines.append(f"| {s['label']} | {s['worker']} | {s['url']} | {len(s['prompts_at_c1'])} | {len(s['checks'])} | "
                     f"{', '.join(s['failed']) or '-'} | {s['verdict']} |")
    cross = ident.get("servers_c1_crosscheck") or {}
    if cross.get("identical") or cross.get("different"):
        lines += ["", f"c1 on two servers (ladder and boot baselines): {cross['identical']} identical, "
                      f"{len(cross['different'])} different" + (": " + "; ".join(cross["different"][:8])
                                                                 if cross["different"] else "")]
    return lines


def markdown(state: ReportState, data: dict) -> str:
    ident = data["identity"]
    lines = [f"# oracle {state.mode}: {_headline(state, data)}", ""]
    if _reference_unstable(data):
        lines += ["**The reference is not deterministic run to run** (its own c1 repeat differed): verdicts against it "
                  "make no token-exactness claim.", ""]
    if data["interruption"]:
        lines += [f"**Stopped midway:** {data['interruption']}", "",
                  f"Missing prompts: {', '.join(data['missing']) or 'none'}", ""]
    lines += [f"- backend: `{ident.get('backend')}` (family {ident.get('family')}, platform "
              f"{ident.get('platform') or 'unspecified'})",
              f"- target: {_target_words(ident)}"
              + (f", server args `{ident['server_args']}`" if ident.get("server_args") else ""),
              f"- server build: {ident.get('server', {}).get('build')}",
              f"- server context: {context_words(ident.get('served_context')) or 'not read'}",
              f"- model: {ident.get('model', {}).get('path')} (sha256 {str(ident.get('model', {}).get('sha256'))[:16]}…)",
              f"- suite: {data['suite'].get('name')} ({data['suite'].get('prompts')} prompts, sha256 "
              f"{str(data['suite'].get('sha256'))[:16]}…)"]
    if data["reference"]:
        lines.append(f"- reference: {data['reference']['path']} (kind {data['reference']['kind']})")
    if state.recorded_reference:
        lines.append(f"- recorded reference: {state.recorded_reference}")
    ev = data.get("evidence")
    if ev:
        counters = ev["counters"] if isinstance(ev["counters"], str) else ", ".join(ev["counters"])
        lines.append(f"- evidence the server gave: token ids {ev['token_ids']}; logprobs {ev['logprobs']}; "
                     f"cached tokens {ev['cached_tokens']}; counters {counters}")
    env = ident.get("environment") or {}
    if env:
        lines.append("- environment: " + ", ".join(f"`{k}={v}`" for k, v in sorted(env.items())))
    lines += _confidence_line(data["summary"])
    lines += _server_lines(ident)
    lines += canary_markdown_lines(state.canaries)
    lines += _condition_lines(state)
    lines += coverage_markdown(data)
    lines += logits_markdown_lines(state.logits)
    spec = data["speculation"]
    lines += speed_markdown_lines(state.speed, spec)
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
    if state.notes:
        lines += ["", "Notes:"] + [f"- {n}" for n in state.notes]
    return "\n".join(lines) + "\n"


def _target_words(ident: dict) -> str:
    if ident.get("target") == "in-process":
        return "in process (oracle loads the model itself; no server)"
    return f"{ident.get('target')} `{ident.get('launch_command') or ident.get('url')}`"
