"""repro.json and repro.md: the smallest diverging request as a maintainer can run it and paste it.

    write_repro(out, source, result, verified, status="reproduced", exit_code=0, answer="...", server_starts=4,
                wall_s=9.1)

Both launch commands (secrets redacted, `redaction.redact_command`), the exact request as a `curl` command with
the prompt as token ids (the body `Backend.one_shot` built and the verify sent), expected and observed token ids
and texts around the split, the margins in nats where the records hold top-k logprobs, the server identity, the
probes, and a one-paragraph summary. Written through `store.records.atomic_write_text` (public text only).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Sequence

from oracle.compare.tokens import TokenSide
from oracle.redaction import redact_command
from oracle.repro.search import SearchResult, Verified, split_within
from oracle.repro.source import ReproSource
from oracle.store.records import atomic_write_text

__all__ = ["EXAMPLE_PORT", "around_split", "curl_command", "margins", "render_markdown", "repro_data", "summary",
           "write_repro"]

WINDOW = 4  # tokens shown on each side of the split
EXAMPLE_PORT = 8080  # the port repro.md fills into both commands, so each runs as pasted
TOP_SHOWN = 5


def curl_command(route: str, body: dict, *, port: str | int = "{port}", api_key: bool = False) -> str:
    """One POST as a shell command; the body is the request's exact JSON (the prompt as token ids)."""
    parts = ["curl", "-s", f"http://127.0.0.1:{port}{route}", "-H", "Content-Type: application/json"]
    words = " ".join(shlex.quote(p) for p in parts)
    if api_key:  # the key stays in the user's environment; the command names the variable only
        words += ' -H "Authorization: Bearer $ORACLE_API_KEY"'
    return f"{words} -d {shlex.quote(json.dumps(body, separators=(',', ':')))}"


def around_split(expected: Sequence[int], observed: Sequence[int], split: int, max_tokens: int,
                 window: int = WINDOW) -> list[dict]:
    """Rows from `window` tokens before the split to `window` after it: position, both ids (None past an end;
    the observed side ends at max_tokens, the expected side at the reference's length)."""
    rows = []
    for i in range(max(0, split - window), split + window + 1):
        e = expected[i] if i < len(expected) else None
        o = observed[i] if i < min(len(observed), max_tokens) else None
        if e is None and o is None:
            break
        rows.append({"position": i, "expected_id": e, "observed_id": o, "split": i == split})
    return rows


def margins(source: ReproSource, split: int, observed_token: int | None) -> dict:
    """In nats, where recorded: the reference's logprob of its own token minus that of the observed one at the
    split, and the gate's candidate record's of the observed minus the expected (when its path to the split is the
    observed one); each side's top-k there."""
    exp_side = TokenSide.of(source.expected)
    expected_token = source.expected.completion_ids[split] if split < len(source.expected.completion_ids) else None
    out = {"reference_nats": None, "candidate_nats": None, "reference_top": [], "candidate_top": [],
           "gate_margin_nats": (source.check.get("evidence") or {}).get("margin_nats")}
    if expected_token is not None and observed_token is not None:
        a, b = exp_side.logprob_of(split, expected_token), exp_side.logprob_of(split, observed_token)
        out["reference_nats"] = round(a - b, 6) if a is not None and b is not None else None
    out["reference_top"] = _top(source.expected, split)
    gated = source.gated
    if gated is not None and gated.completion_ids[:split + 1] == source.expected.completion_ids[:split] + \
            ([observed_token] if observed_token is not None else []):
        side = TokenSide.of(gated)
        a, b = side.logprob_of(split, observed_token), side.logprob_of(split, expected_token)
        out["candidate_nats"] = round(a - b, 6) if a is not None and b is not None else None
        out["candidate_top"] = _top(gated, split)
    return out


def _top(record, i: int) -> list[list]:
    if i >= len(record.top_ids):
        return []
    return [[int(t), round(float(lp), 4)] for t, lp in list(zip(record.top_ids[i], record.top_logprobs[i]))[:TOP_SHOWN]]


def repro_data(source: ReproSource, result: SearchResult | None, verified: Verified | None, *, status: str,
               exit_code: int | None, answer: str, server_starts: int, wall_s: float, api_key: bool = False) -> dict:
    ident, ref_ident = source.identity, source.manifest.get("identity") or {}
    candidate = verified.command if verified else source.candidate_command
    reference = (source.reference_command or "").removeprefix("exec ")
    data = {
        "schema_version": 1, "status": status, "exit_code": exit_code, "answer": answer,
        "report": str(source.report_dir), "reference": str(source.reference_dir), "backend": source.backend,
        "prompt": source.target, "suite_prompts": list(source.order), "gate_split": source.split,
        "gate_verdict": source.check.get("verdict"), "gate_max_tokens": source.max_tokens,
        "launch": {"reference": redact_command(reference) if reference else None,
                   "candidate": redact_command(candidate) if candidate else None, "port": "{port}"},
        "request": {"temperature": 0.0, "greedy": True, "seed": source.seed, "logprobs": source.logprobs},
        "server": {"candidate": ident.get("server"), "reference": ref_ident.get("server"),
                   "model": ident.get("model"), "reference_model": ref_ident.get("model"), "host": ident.get("host"),
                   "accelerator": ident.get("accelerator")},
        "search": None, "split": None, "requests": [], "curl": [], "expected": None, "observed": None,
        "around_split": [], "margins": None, "summary": "", "server_starts": server_starts, "wall_s": round(wall_s, 2),
    }
    if result is not None:
        data["search"] = {"prompts": list(result.prompts), "max_tokens": result.max_tokens, "split": result.split,
                          "proven": result.proven, "probes": [p.as_json() for p in result.probes]}
    if verified is None or result is None or result.split is None:
        return data
    m, observed = result.max_tokens, verified.observed[0]
    split = split_within(source.expected.completion_ids, observed, m)  # the verify's own split, as curl sees it
    split = result.split if split is None else split
    data["split"] = split
    decoded = verified.decoded
    data["requests"] = [{"route": route, "body": body} for route, body in verified.requests]
    data["curl"] = [curl_command(route, body, api_key=api_key) for route, body in verified.requests]
    expected = source.expected.completion_ids
    data["expected"] = {"ids": expected[:m], "text": source.expected.text if m >= len(expected) else None,
                        "token_at_split": _token(expected, split, decoded)}
    data["observed"] = {"ids": observed, "text": verified.texts[0], "token_at_split": _token(observed, split, decoded),
                        "runs": verified.observed, "identical": all(o == observed for o in verified.observed)}
    data["around_split"] = [{**row, "expected_text": decoded.get(row["expected_id"]),
                             "observed_text": decoded.get(row["observed_id"])}
                            for row in around_split(expected, observed, split, m)]
    data["margins"] = margins(source, split, observed[split] if split < len(observed) else None)
    data["summary"] = summary(data)
    return data


def _token(ids: Sequence[int], i: int, decoded: dict[int, str]) -> dict | None:
    return {"id": ids[i], "text": decoded.get(ids[i])} if i < len(ids) else None


def summary(data: dict) -> str:
    """One paragraph a maintainer can paste into an issue."""
    search, exp, obs, mg = data["search"], data["expected"]["token_at_split"], data["observed"]["token_at_split"], \
        data["margins"]
    server = data["server"]["candidate"] or {}
    build = f"{server.get('server', 'the server')} build {server.get('build', 'unknown')}"
    model = (data["server"]["model"] or {}).get("sha256")
    n_prompt = len(data["requests"][-1]["body"].get("prompt") or []) if data["requests"] else 0
    context = len(search["prompts"]) - 1
    said = (f"the reference continues with token {exp['id']} {exp['text']!r}" if exp else "the reference had ended") + \
        (f" where this server gives {obs['id']} {obs['text']!r}" if obs else " where this server stopped")
    margin = f" (the reference's margin there: {mg['reference_nats']:.4f} nats)" if mg and mg["reference_nats"] \
        is not None else ""
    after = f", after {context} other request(s) on the same server" if context else ""
    return (f"With `{data['launch']['candidate']}` ({build}{', model sha256 ' + model[:12] if model else ''}), a "
            f"greedy request (temperature 0, top_k 1, seed {data['request']['seed']}) of a {n_prompt}-token "
            f"prompt ({data['prompt']}{after}) diverges from the reference recorded with "
            f"`{data['launch']['reference'] or 'an unrecorded command'}` at completion token {data['split']} of "
            f"max_tokens {search['max_tokens']}: {said}{margin}. A fresh server gave the same "
            f"{'tokens' if data['observed']['identical'] else 'divergence (not the same tokens)'} on both of two "
            f"requests; {len(search['prompts'])} of the suite's {len(data['suite_prompts'])} prompts and "
            f"{search['max_tokens']} tokens are the smallest {'proven ' if search['proven'] else ''}set that "
            f"diverges. Found by `oracle repro` from the gate report {data['report']}.")


def render_markdown(data: dict) -> str:
    lines = [f"# oracle repro: {data['prompt']}", ""]
    if data["status"] != "reproduced":
        lines += [f"**{data['answer'] or data['status']}**", ""]
    if data["summary"]:
        lines += [data["summary"], ""]
    port = str(EXAMPLE_PORT)
    lines += ["## Launch commands", "", f"Secrets redacted; `{{port}}` filled with {port} so each runs as pasted.", "",
              "Reference (as its manifest recorded it):", "", "```sh",
              (data["launch"]["reference"] or "(not recorded)").replace("{port}", port), "```", "",
              "Candidate:", "", "```sh", (data["launch"]["candidate"] or "(not recorded)").replace("{port}", port),
              "```", ""]
    if data["curl"]:
        lines += ["## The request", "", f"Start the candidate, then send (the prompt as token ids; greedy, seed "
                  f"{data['request']['seed']}; the last request is the one that diverges):", "", "```sh",
                  *[c.replace("{port}", port) for c in data["curl"]], "```", ""]
        lines += ["## Expected and observed", "", "| position | expected id | expected text | observed id | "
                  "observed text |", "| --- | --- | --- | --- | --- |"]
        for row in data["around_split"]:
            mark = " **split**" if row["split"] else ""
            lines.append(f"| {row['position']}{mark} | {_cell(row['expected_id'])} | {_text(row['expected_text'])} "
                         f"| {_cell(row['observed_id'])} | {_text(row['observed_text'])} |")
        second = "" if data["observed"]["identical"] else f" (the second request: `{data['observed']['runs'][1]}`)"
        lines += ["", f"Expected ids (first {data['search']['max_tokens']}): `{data['expected']['ids']}`",
                  f"Observed ids: `{data['observed']['ids']}`{second}", ""]
        mg = data["margins"]
        lines += ["## Margins (nats)", "",
                  f"- reference: its token over the observed one at the split: {_nats(mg['reference_nats'])}; "
                  f"its top-{TOP_SHOWN} there (id, logprob): {mg['reference_top'] or 'not recorded'}",
                  f"- candidate (the gate's record): the observed token over the expected one: "
                  f"{_nats(mg['candidate_nats'])}; its top-{TOP_SHOWN} there: {mg['candidate_top'] or 'not recorded'}",
                  f"- the gate's own margin at its split: {_nats(mg['gate_margin_nats'])}", ""]
    server = data["server"]
    lines += ["## Server identity", "", f"- candidate: `{json.dumps(server['candidate'])}`",
              f"- reference: `{json.dumps(server['reference'])}`", f"- model: `{json.dumps(server['model'])}`",
              f"- host: `{json.dumps(server['host'])}`", ""]
    if data["search"]:
        s = data["search"]
        lines += ["## How it was found", "", f"From the gate report `{data['report']}` ({data['gate_verdict']} at "
                  f"token {data['gate_split']} of {data['gate_max_tokens']}); each probe a fresh server "
                  f"({data['server_starts']} starts, {data['wall_s']} s):", "",
                  "| probe | step | prompts | max_tokens | verdict |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {p['number']} | {p['step']} | {', '.join(p['prompts'])} | {p['max_tokens']} | "
                  f"{p['verdict']}{' at ' + str(p['split']) if p['split'] is not None else ''} |" for p in s["probes"]]
        if not s["proven"]:
            lines += ["", "The probe budget (--max-probes) ran out: a smaller request may exist."]
        lines.append("")
    return "\n".join(lines)


def _cell(value) -> str:
    return "" if value is None else str(value)


def _text(text: str | None) -> str:
    return "" if text is None else "`" + json.dumps(text)[1:-1].replace("|", "\\|").replace("`", "'") + "`"


def _nats(value) -> str:
    return "not recorded" if value is None else f"{value:.4f}"


def write_repro(out: Path, source: ReproSource, result: SearchResult | None, verified: Verified | None, *,
                status: str, exit_code: int | None, answer: str, server_starts: int, wall_s: float) -> dict:
    import os

    data = repro_data(source, result, verified, status=status, exit_code=exit_code, answer=answer,
                      server_starts=server_starts, wall_s=wall_s, api_key=bool(os.environ.get("ORACLE_API_KEY")))
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "repro.json", json.dumps(data, indent=1) + "\n")
    atomic_write_text(out / "repro.md", render_markdown(data))
    return data
