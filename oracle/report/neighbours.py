"""The neighbours section (`--neighbours`): per neighbour length, the suite's prompts sent beside it, how many of
their complete token arrays equal their c1 records, whether every neighbour was proven to run beside its prompt,
the class of the outputs (the width map's classes: A is the c1 run's) and each split, named with the neighbour's
length and the position; a length beyond the server's context, dropped with its reason. In identity.html the
picture's neighbour row (report/widths.py; drawn here when no ladder ran, under the width map otherwise), then
the table; the same rows in identity.md and a line for the terminal (`terminal_lines`).

    lines = markdown(data); page = html(data); terminal_lines(data["neighbours"])
"""

from __future__ import annotations

from oracle.compare.verdicts import DROPPED, EXACT, LOGPROBS_MOVED
from oracle.report.page import e
from oracle.report.widths import neighbour_classes, neighbour_proven, picture

__all__ = ["PLACE", "html", "markdown", "rows", "terminal_lines"]

PLACE = 26  # page order (report/sections.py): after the width map, whose picture holds the neighbour row

_COLUMNS = ("neighbour", "verdict", "exact vs c1", "records", "overlap proven", "class", "splits")


def _split_words(row: dict, length: str) -> str:
    """`code-palindrome at token 3 beside a 9-token neighbour, ...` ('-' where none split)."""
    splits = row.get("splits") or []
    words = [f"{s['prompt']} " + ("with its logprobs moved" if s["verdict"] == LOGPROBS_MOVED else
                                  f"at {'the finish' if s['position'] is None else 'token ' + str(s['position'])} "
                                  f"({s['verdict']})") for s in splits]
    return (", ".join(words) + f" beside a {length}-token neighbour") if words else "-"


def _overlap_words(row: dict) -> str:
    overlap = row.get("overlap") or {}
    alone = sum(reached < 2 for reached in overlap.values())
    if not alone:
        return f"yes ({len(overlap)}/{len(overlap)} prompts)"
    return f"no: {alone} of {len(overlap)} prompts decoded without their neighbour (inconclusive)"


def _exact_words(row: dict) -> str:
    exact = row.get("exact_vs_c1", (row.get("counts") or {}).get(EXACT, 0))
    return f"{exact}/{row.get('records', 0)}"


def _tokens(length: str) -> str:
    return f"{length} token" + ("" if length == "1" else "s")


def rows(data: dict) -> list[tuple[str, ...]]:
    """One tuple per length in _COLUMNS' order (a dropped length: its reason in the splits column)."""
    neighbours = data.get("neighbours") or {}
    classes = neighbour_classes(data.get("width_map"), neighbours)
    out = []
    for length, row in neighbours.items():
        if row.get("verdict") == DROPPED:
            out.append((_tokens(length), DROPPED, "-", "-", "-", "-", row.get("detail", "")))
            continue
        label = classes[length] or "-"
        label += " ≈" if row.get("tie_flips") else ""
        out.append((_tokens(length), row.get("verdict", ""), _exact_words(row), str(row.get("records", 0)),
                    _overlap_words(row), label, _split_words(row, length)))
    return out


def _first_words(data: dict) -> str:
    neighbours = data.get("neighbours") or {}
    parting = [n for n, row in neighbours.items() if row.get("verdict") != DROPPED and
               (row["same_as_c1"] is False if "same_as_c1" in row else
                any(s["verdict"] != LOGPROBS_MOVED for s in row.get("splits") or []))]
    if not parting:
        return "every neighbour length tried leaves the prompts' outputs as at c1"
    return f"neighbour lengths that change the prompts' outputs: {', '.join(parting)} tokens"


def terminal_lines(neighbours: dict | None) -> list[str]:
    """One line: per length its exact count vs c1, whether its outputs are the c1 run's (the classes' letters are
    the report's: the terminal does not see the width map) and its overlap; then the lengths that part from c1."""
    if not neighbours:
        return []
    cells = []
    for r in rows({"neighbours": neighbours}):
        if r[1] == DROPPED:
            cells.append(f"{r[0]} dropped")
            continue
        outputs = "" if r[5] == "-" else ", c1's outputs" if r[5].startswith("A") else ", other outputs"
        cells.append(f"{r[0]} {r[2]} exact{outputs}{' ≈' if r[5].endswith('≈') else ''}"
                     + ("" if r[4].startswith("yes") else " (overlap not proven)"))
    return [f"neighbours: {' · '.join(cells)}; {_first_words({'neighbours': neighbours})}"]


def markdown(data: dict) -> list[str]:
    neighbours = data.get("neighbours")
    if not neighbours:
        return []
    lines = ["", f"## Neighbours (`--neighbours {','.join(neighbours)}`)", "",
             "Each suite prompt sent with an unrelated request of that many prompt tokens beside it (its prefill "
             "running beside the prompt's decode); its complete token array compared with its c1 record. Class: "
             "the width map's (A: the c1 run's outputs); ≈: a split at a margin below "
             f"{(data.get('width_map') or {}).get('near_tie_nats', 0.5):g} nats (a tie flip).", "",
             "| " + " | ".join(_COLUMNS) + " |", "|" + " --- |" * len(_COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(data)]
    return lines + ["", f"- {_first_words(data)}"]


def html(data: dict) -> str:
    neighbours = data.get("neighbours")
    if not neighbours:
        return ""
    head = "".join(f"<th>{e(c)}</th>" for c in _COLUMNS)
    body = "".join(f"<tr class='{e(r[1])}'>" + "".join(f"<td>{e(v)}</td>" for v in r) + "</tr>" for r in rows(data))
    shown = ("<p>The picture's neighbour row is under the width map above.</p>" if data.get("width_map")
             else picture(None, neighbours))
    return (f"<h2 id=neighbours>Neighbours (<code>--neighbours {e(','.join(neighbours))}</code>)</h2>"
            "<p>Each suite prompt sent with an unrelated request of that many prompt tokens beside it (its prefill "
            "running beside the prompt's decode); its complete token array compared with its c1 record. Class: the "
            "width map's colours (A: the c1 run's outputs); ≈ a tie flip; a faded, dashed cell a length whose "
            "overlap was not proven; hatching, a length not run.</p>"
            f"{shown}<p><b>{e(_first_words(data))}</b></p><table><tr>{head}</tr>{body}</table>")
