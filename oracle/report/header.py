"""The report's header section: the verdict and its headline counts, the identity (backend, target, server,
model, suite, reference, evidence, environment) and the counts with their Wilson 95% intervals.

    lines = markdown(data)   # identity.md's title, headline and identity bullets
    page = html(data)        # identity.html's h1, headline, identity table and counts
"""

from __future__ import annotations

import json

from oracle.canary.context import context_words
from oracle.canary.results import canary_summary
from oracle.compare.conditions import headline_counts, headline_parts
from oracle.compare.confidence import count_words, interval_words
from oracle.compare.noise import NOT_WITHIN_BOOT
from oracle.compare.verdicts import LOGPROBS_MOVED
from oracle.run.plan_estimate import plan_words
from oracle.logits.report import headline as logits_headline
from oracle.report.page import e, hover, span
from oracle.speed.report import headline as speed_headline
from oracle.speed.report import not_judged_words

__all__ = ["PLACE", "html", "markdown"]

PLACE = 0  # page order (report/sections.py): first: verdict, headline counts, identity


def _reference_unstable(data: dict) -> bool:
    return (data.get("reference") or {}).get("determinism") == NOT_WITHIN_BOOT


def _allowed_words(data: dict) -> str:
    """', 3 near-ties allowed': the prompts that were not exact and passed only because --allow-near-ties let them
    (a PASS of 9/12 exact says why the other 3 did not fail it)."""
    n = sum(1 for c in data.get("checks") or [] if c.get("kind") == "tokens" and c.get("verdict") == "near-tie"
            and c.get("outcome") == "passed")
    return f", {n} near-tie{'s' if n != 1 else ''} allowed" if n else ""
def _moved_words(data: dict) -> str | None:
    """'logprobs moved in 2 items (passed by --allow-logprobs-moved)': the --oracle-compare logprobs items whose
    tokens were equal and whose logprobs were not; None without any."""
    moved = [c for c in data.get("checks") or [] if c.get("verdict") == LOGPROBS_MOVED]
    if not moved:
        return None
    allowed = sum(c.get("outcome") == "passed" for c in moved)
    words = f"logprobs moved in {len(moved)} item{'s' if len(moved) > 1 else ''}"
    return words + (f" ({allowed} passed by --allow-logprobs-moved)" if allowed else "")


def _headline(data: dict) -> str:
    s = data["summary"]
    verdict = data["verdict"].upper()
    not_judged = not_judged_words(data.get("checks") or []) if data["verdict"] == "fail" else None
    if not_judged:  # the only failure is a speed the run could not judge: the headline says why
        verdict = f"{verdict} ({not_judged})"
    logits = logits_headline(data.get("logits"))
    tokens_gated = any(c["kind"] == "tokens" for c in data.get("checks") or []) or not logits
    if data["mode"] == "gate" and not tokens_gated:
        head = f"{verdict}: {logits}"
    elif data["mode"] == "gate":
        head = (f"{verdict}: the reference is not deterministic run to run, so no token-exactness claim; "
                f"{s['exact'][0]}/{s['exact'][1]} matched it" if _reference_unstable(data)
                else f"{verdict}: {s['exact'][0]}/{s['exact'][1]} exact{_allowed_words(data)}")
    else:
        head = f"{verdict}: {s['records'][0]}/{len(data.get('prompts') or [])} recorded"
    extra = headline_counts(data.get("ladder") or {}, data.get("boots") or {})
    if logits and tokens_gated and data["mode"] == "gate":
        extra = [logits] + extra
    speed = speed_headline(data.get("speed"))
    if speed:
        extra = [speed] + extra
    moved = _moved_words(data)
    if moved:
        extra = [moved] + extra
    return head + (" · " + " · ".join(extra) if extra else "")


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


def _target_words(ident: dict) -> str:
    if ident.get("target") == "in-process":
        return "in process (oracle loads the model itself; no server)"
    return f"{ident.get('target')} `{ident.get('launch_command') or ident.get('url')}`"


def markdown(data: dict) -> list[str]:
    ident = data["identity"]
    lines = [f"# oracle {data['mode']}: {_headline(data)}", ""]
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
              *([f"- run plan: {plan_words(ident.get('plan'))}"] if ident.get("plan") else []),
              f"- model: {ident.get('model', {}).get('path')} (sha256 {str(ident.get('model', {}).get('sha256'))[:16]}…)",
              f"- suite: {data['suite'].get('name')} ({data['suite'].get('prompts')} prompts, sha256 "
              f"{str(data['suite'].get('sha256'))[:16]}…)"]
    if data["reference"]:
        lines.append(f"- reference: {data['reference']['path']} (kind {data['reference']['kind']})")
    if data.get("recorded_reference"):
        lines.append(f"- recorded reference: {data['recorded_reference']}")
    ev = data.get("evidence")
    if ev:
        counters = ev["counters"] if isinstance(ev["counters"], str) else ", ".join(ev["counters"])
        lines.append(f"- evidence the server gave: token ids {ev['token_ids']}; logprobs {ev['logprobs']}; "
                     f"cached tokens {ev['cached_tokens']}; counters {counters}")
    env = ident.get("environment") or {}
    if env:
        lines.append("- environment: " + ", ".join(f"`{k}={v}`" for k, v in sorted(env.items())))
    return lines + _confidence_line(data["summary"])


def html(data: dict) -> str:
    s = data.get("summary", {})
    ident = data.get("identity", {})
    conf = s.get("confidence") or {}
    parts: list[tuple[str, str]] = []  # (text, hover)
    logits = s.get("logits")
    if data.get("mode") != "gate":
        parts.append((f"{s.get('records', [0, 0])[0]}/{s.get('records', [0, 0])[1]} recorded", ""))
    elif s.get("exact", [0, 0])[1] or not logits:
        k, n = s.get("exact", [0, 0])
        parts.append((f"{k}/{n} exact", hover(conf.get("exact"))))
    if logits:
        parts.append((f"Mean KLD {logits['mean_kld']:.6f} (lower bound), Same top p {100 * logits['same_top1']:.2f} %",
                      ""))
    parts += [(text, f"Wilson 95% {interval_words(*count)}")
              for text, count in headline_parts(data.get("ladder") or {}, data.get("boots") or {})]
    canaries = canary_summary(data.get("canaries") or {})
    if canaries:
        parts.append((f"canaries {canaries}", "; ".join(f"{family} {c['k']}/{c['n']}: {hover(c)}"
                                                         for family, c in (conf.get("canaries") or {}).items())))
    spec = data.get("speculation") or {}
    if spec.get("rate") is not None:
        parts.append((f"acceptance {spec['rate']:.1%}", ""))
    speed = speed_headline(data.get("speed"))
    if speed:
        parts.insert(1, (speed, ""))
    moved = _moved_words(data)
    if moved:
        parts.insert(1, (moved, "tokens equal, returned logprobs not bit-identical (--oracle-compare logprobs)"))
    verdict = data.get("verdict", "partial")
    server = ident.get("server") or {}
    model = ident.get("model") or {}
    env = ident.get("environment") or {}
    packages = ident.get("packages") or {}
    rows = [("backend", ident.get("backend")), ("server", f"{server.get('server')} build {server.get('build')}"),
            ("model", f"{model.get('path')} (sha256 {model.get('sha256')})"),
            ("server context", context_words(ident.get("served_context"))),
            ("run plan", plan_words(ident.get("plan"))),
            ("launch command", ident.get("launch_command")), ("url", ident.get("url")),
            ("accelerator", json.dumps(ident.get("accelerator"), sort_keys=True) if ident.get("accelerator") else None),
            ("environment", ", ".join(f"{k}={v}" for k, v in sorted(env.items())) or None),
            ("versions", ", ".join(f"{k} {v}" for k, v in sorted(packages.items()) if v) or None),
            ("determinism", data.get("determinism")),
            ("reference", (data.get("reference") or {}).get("path"))]
    table = "".join(f"<tr><th>{e(k)}</th><td class=mono>{e(v)}</td></tr>" for k, v in rows if v)
    interrupted = (f"<p class=fail><b>Stopped midway:</b> {e(data['interruption'])}</p>"
                   if data.get("interruption") else "")
    not_judged = not_judged_words(data.get("checks") or []) if verdict == "fail" else None
    said = verdict.upper() + (f" ({not_judged})" if not_judged else "")
    return (f"<h1>oracle {e(data.get('mode'))}: <span class='verdict {e(verdict)}'>{e(said)}</span></h1>"
            f"<p><b>{' · '.join(span(text, tip) for text, tip in parts)}</b></p>{interrupted}<table>{table}</table>"
            f"{_counts(data)}")


def _counts(data: dict) -> str:
    """Every count identity.json gives an interval (its `confidence` keys), one row each, in a closed details."""
    conf = (data.get("summary") or {}).get("confidence") or {}
    rows = [("exact prompts", conf.get("exact"))] if (conf.get("exact") or {}).get("n") else []
    for name, part in [(k, v) for k, v in (data.get("ladder") or {}).items()] + \
            [(f"boot {k}", v) for k, v in (data.get("boots") or {}).items()]:
        rows += [(f"{name} {side.replace('_', ' ')}", c) for side, c in (part.get("confidence") or {}).items()]
    rows += [("boots agreeing with boot 1", conf.get("boots")), ("c1 identical on two servers", conf.get("servers_c1"))]
    rows += [(f"canaries {family}", c) for family, c in (conf.get("canaries") or {}).items()]
    body = "".join(f"<tr><td>{e(name)}</td><td>{c['k']}/{c['n']}</td><td>{c['wilson95'][0]:.4f}–"
                   f"{c['wilson95'][1]:.4f}</td></tr>" for name, c in rows if c)
    if not body:
        return ""
    return ("<details class=counts><summary>Counts with their Wilson 95% intervals</summary><table><tr><th>count</th>"
            f"<th>k/n</th><th>Wilson 95%</th></tr>{body}</table></details>")
