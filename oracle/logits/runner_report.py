"""The report's section for a runner's own checks (`--backend=python:...`): chunked-prefill invariance per chunk
size (the suite's paths, then the ladder of prompt lengths) and the mean prompt log-prob against the reference's, from identity.json's `chunked_prefill` and
`prompt_logprob` (absent for every other family: nothing to say).

    lines = markdown(data)   # identity.md lines; [] without either key
    page = html(data)        # identity.html's section; "" without either key
"""

from __future__ import annotations

from html import escape

__all__ = ["PLACE", "html", "markdown"]

PLACE = 50  # page order (report/sections.py): a python runner: chunked prefill, the mean prompt log-prob


def _num(x, fmt: str = ".5f") -> str:
    return "-" if x is None else format(x, fmt)


def _chunk_rows(chunked: dict | None) -> list[tuple[str, str, str, str]]:
    """(mode, top-1 equal, max |Δlogprob|, longest prefix) per chunk size."""
    rows = []
    for name, m in ((chunked or {}).get("modes") or {}).items():
        if m.get("not_offered") or m.get("not_reached"):
            rows.append((name, f"not {'offered' if m.get('not_offered') else 'reached'}: "
                               f"{m.get('not_offered') or m.get('not_reached')}", "-", "-"))
            continue
        o = m["overall"]
        rows.append((name, f"{o['positions'] - len(m['top1_differs'])}/{o['positions']}",
                     _num(o.get("max_abs_delta"), ".3g"), str(m.get("longest_prefix_tokens"))))
    for name, m in (((chunked or {}).get("ladder") or {}).get("modes") or {}).items():
        lengths = [r["tokens"] for r in m["lengths"]]
        rows.append((f"{name} (ladder: {', '.join(map(str, lengths)) or 'none longer than a chunk'})",
                     f"{m['tested'] - len(m['top1_differs'])}/{m['tested']}", _num(m.get("max_abs_delta"), ".3g"),
                     str(max(lengths, default="-"))))
    return rows


def _prompt_line(p: dict | None) -> str | None:
    if not p or p.get("candidate") is None:
        return None
    ref = "" if p.get("reference") is None else f" vs the reference's {p['reference']:.5f} (Δ {p['delta']:+.5f} nats)"
    return f"Mean prompt log-prob (teacher-forced over the prompts): {p['candidate']:.5f}{ref}."


def markdown(data: dict) -> list[str]:
    chunked, prompt = data.get("chunked_prefill"), data.get("prompt_logprob")
    rows, line = _chunk_rows(chunked), _prompt_line(prompt)
    if not rows and not line:
        return []
    out = ["", "## The runner's own checks", ""]
    if line:
        out += [line, ""]
    if rows:
        out += ["Chunked prefill against one pass (top-1 equal at the tested prefix lengths):", "",
                "| chunks | top-1 equal | max \\|Δlogprob\\| (nats) | longest prefix |", "| --- | --- | --- | --- |"]
        out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return out


def html(data: dict) -> str:
    chunked, prompt = data.get("chunked_prefill"), data.get("prompt_logprob")
    rows, line = _chunk_rows(chunked), _prompt_line(prompt)
    if not rows and not line:
        return ""
    body = "".join(f"<tr><td>{escape(a)}</td><td>{escape(b)}</td><td>{escape(c)}</td><td>{escape(d)}</td></tr>"
                   for a, b, c, d in rows)
    table = (f"<table><tr><th>chunks</th><th>top-1 equal</th><th>max |Δlogprob| (nats)</th>"
             f"<th>longest prefix</th></tr>{body}</table>") if rows else ""
    return f"<h2>The runner's own checks</h2>{f'<p>{escape(line)}</p>' if line else ''}{table}"
