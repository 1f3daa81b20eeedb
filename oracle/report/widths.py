"""The width map section: per width the class of outputs (class A is the c1 run every width is compared with),
the first width that parts from c1, per class its prompts and first split positions, and the widths a plain
`--ladder` list never tried; in identity.html one picture (width on the x axis, class as colour, near-ties
marked; under it, with `--neighbours`, a row per neighbour length in the same classes); the same few lines for
the terminal (`terminal_lines`).

    lines = markdown(data); page = html(data); terminal_lines(data["width_map"])
"""

from __future__ import annotations

from oracle.compare.width_map import class_label, width_words
from oracle.report.page import e

__all__ = ["PLACE", "html", "markdown", "neighbour_classes", "neighbour_proven", "picture", "terminal_lines"]

PLACE = 25  # page order (report/sections.py): after the verdict grid and the ladder's table

# One colour per class, A (the c1 run's) green as an exact cell; readable in print by the letter inside.
_COLOURS = ("#8fd18a", "#f0a35e", "#9d8bd6", "#e57373", "#5fb3c9", "#d6c25e", "#c77fb8", "#8c8c8c")


def _colour(label: str) -> str:
    i = ord(label[0]) - ord("A") if len(label) == 1 else int(label[1:]) - 1
    return _COLOURS[i % len(_COLOURS)]


def _row_words(w: dict) -> str:
    return (f"c{w['width']} {w['class']}" + ("" if w["proven"] else " (not proven)")
            + (" ≈" if w["tie_flips"] else ""))


def _class_words(c: dict) -> str:
    splits = ", ".join(f"{p} @{'finish' if f is None else f}" for p, f in c["prompts"].items())
    widths = f"width {c['widths'][0]}" if len(c["widths"]) == 1 else f"widths {width_words(c['widths'])}"
    return f"class {c['class']} ({widths}): " + (splits or "the c1 run's outputs")


def _first_words(wm: dict) -> str:
    first = wm.get("first_parting")
    if first is None:
        return "every width tried gives the c1 run's outputs"
    proven = next((w["proven"] for w in wm["widths"] if w["width"] == first), True)
    return f"first width that parts from c1: {first}" + ("" if proven else " (its overlap not proven)")


def _never_words(wm: dict) -> str | None:
    return f"widths never tried: {width_words(wm['never_tried'])}" if wm.get("never_tried") else None


def terminal_lines(wm: dict | None) -> list[str]:
    """The map in a few terminal lines (the plugin's end of run)."""
    if not wm:
        return []
    rows = " · ".join(_row_words(w) for w in wm["widths"])
    lines = [f"width map ({wm['ladder']}): {rows}; {_first_words(wm)}"]
    lines += [_class_words(c) for c in wm["classes"] if c["class"] != "A"]
    never = _never_words(wm)
    return lines + ([never] if never else [])


def markdown(data: dict) -> list[str]:
    wm = data.get("width_map")
    if not wm:
        return []
    lines = ["", f"## Width map (`--ladder {wm['ladder']}`)", "",
             "Widths whose complete token arrays are equal for every prompt share a class; class A is the c1 run "
             "every width is compared with. ≈: a split at a margin below "
             f"{wm.get('near_tie_nats', 0.5):g} nats (a tie flip).", "",
             "| width | class | overlap proven | records | split from c1 | tie flips | confident flips |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for w in wm["widths"]:
        proven = "yes" if w["proven"] else "no (inconclusive)"
        if w["source"] != "ladder":
            proven = w["source"]
        lines.append(f"| c{w['width']} | {w['class']}{' ≈' if w['tie_flips'] else ''} | {proven} | {w['records']} | "
                     f"{w['split_records']} | {w['tie_flips']} | {w['confident_flips']} |")
    lines += ["", f"- {_first_words(wm)}"]
    lines += [f"- {_class_words(c)}" for c in wm["classes"]]
    never = _never_words(wm)
    return lines + ([f"- {never}"] if never else [])


def neighbour_classes(wm: dict | None, neighbours: dict) -> dict[str, str | None]:
    """Neighbour length -> its class: A when every array is its c1 record's, a width's class when its arrays are that
    class's (the same `outputs` digest), else a class of its own, lettered after the widths'; None where the length
    was not run (dropped) or the report predates the digest."""
    known = {c.get("outputs"): c["class"] for c in (wm or {}).get("classes", []) if c.get("outputs")}
    taken = len((wm or {}).get("classes", [])) or 1  # A is the c1 run's even without a ladder
    out: dict[str, str | None] = {}
    for length, row in neighbours.items():
        digest = row.get("outputs")
        if "records" not in row:  # dropped, not run
            out[length] = None
        elif row.get("same_as_c1", not any(s["verdict"] != "logprobs-moved" for s in row.get("splits") or [])):
            out[length] = "A"
        elif digest is None:  # a report from before the digest: which outputs, unknown
            out[length] = None
        else:
            if digest not in known:
                known[digest], taken = class_label(taken), taken + 1
            out[length] = known[digest]
    return out


def neighbour_proven(row: dict) -> bool:
    """Every prompt's neighbour generated while the prompt decoded (reached 2)."""
    return all(reached >= 2 for reached in (row.get("overlap") or {}).values())


def _cell(x: float, y: float, cell: int, label: str | None, tip: str, *, proven: bool, tie: bool) -> str:
    """One class cell (colour and letter), its tip, ≈ above it for a tie flip, dashed where unproven; a hatched
    cell without a class."""
    if label is None:
        return (f"<g><title>{e(tip)}</title><rect x='{x}' y='{y}' width='{cell}' height='{cell}' "
                "fill='url(#untried)' stroke='#bbb'/></g>")
    dash = "" if proven else " stroke-dasharray='3 2' fill-opacity='0.45'"
    out = (f"<g><title>{e(tip)}</title><rect x='{x}' y='{y}' width='{cell}' height='{cell}' "
           f"fill='{_colour(label)}' stroke='#333'{dash}/><text x='{x + cell / 2}' y='{y + 17}' font-size='12' "
           f"text-anchor='middle'>{e(label)}</text></g>")
    if tie:
        out += f"<text x='{x + cell / 2}' y='{y - 4}' font-size='13' text-anchor='middle'>≈</text>"
    return out


def _tick(x: float, y: float, text) -> str:
    return f"<text x='{x}' y='{y}' font-size='11' text-anchor='middle'>{e(text)}</text>"


def _width_row(wm: dict, x0: int, top: int, cell: int) -> tuple[list[str], int]:
    """The widths' cells (x: width, in order; a hatched gap where widths were skipped) and their ticks."""
    gap, x, parts, previous = 10, x0, [], 0
    for w in wm["widths"]:
        if w["width"] > previous + 1:  # widths never tried between two tried ones
            parts.append(f"<rect x='{x}' y='{top}' width='{gap}' height='{cell}' fill='url(#untried)' "
                         f"stroke='#bbb'><title>widths {width_words(range(previous + 1, w['width']))} "
                         "never tried</title></rect>")
            x += gap + 2
        previous = w["width"]
        tip = (f"c{w['width']}: class {w['class']}, {w['split_records']}/{w['records']} records split from c1, "
               f"{w['tie_flips']} tie flip(s), {w['confident_flips']} confident" + ("" if w["proven"] else
                                                                                  ", overlap not proven"))
        parts.append(_cell(x, top, cell, w["class"], tip, proven=w["proven"], tie=bool(w["tie_flips"])))
        parts.append(_tick(x + cell / 2, top + cell + 14, w["width"]))
        x += cell + 2
    return parts, x


def _neighbour_row(wm: dict | None, neighbours: dict, x0: int, top: int, cell: int) -> tuple[list[str], int]:
    """One cell per neighbour length (x: the neighbour's prompt tokens, ascending), its class as colour."""
    classes = neighbour_classes(wm, neighbours)
    x, parts = x0, []
    for length, row in neighbours.items():
        label = classes[length]
        beside = f"beside a {length}-token prompt"
        if label is None:
            tip = f"{beside}: {row.get('verdict')}: {row.get('detail', 'no class recorded')}"
        else:
            tip = (f"{beside}: class {label}, {row.get('split_records', 0)}/{row.get('records')} "
                   f"records split from c1, {row.get('tie_flips', 0)} tie flip(s), {row.get('confident_flips', 0)} "
                   "confident" + ("" if neighbour_proven(row) else ", overlap not proven"))
        parts.append(_cell(x, top, cell, label, tip, proven=neighbour_proven(row), tie=bool(row.get("tie_flips"))))
        parts.append(_tick(x + cell / 2, top + cell + 14, length))
        x += cell + 2
    return parts, x


def picture(wm: dict | None, neighbours: dict | None) -> str:
    """Inline SVG: a row of class cells per width tried (the width map) and, under it, a row per neighbour length
    (`--neighbours`: the same classes, so a neighbour that gives a width's outputs shares its colour); ≈ above a
    cell with a tie flip, a dashed outline where the overlap is unproven, hatching where nothing ran."""
    cell, top, band = 26, 18, 26 + 46  # a row's ticks, then room for the next row's ≈ marks
    x0 = 72 if neighbours else 40
    body, right, y = [], 0, top
    if wm:
        parts, right = _width_row(wm, x0, y, cell)
        body += [f"<text x='0' y='{y + 17}' font-size='11'>class</text>",
                 f"<text x='0' y='{y + cell + 14}' font-size='11'>width</text>", *parts]
        y += band
    if neighbours:
        parts, end = _neighbour_row(wm, neighbours, x0, y, cell)
        right = max(right, end)
        body += [f"<text x='0' y='{y + 17}' font-size='11'>class</text>",
                 f"<text x='0' y='{y + cell + 14}' font-size='11'>neighbour</text>", *parts]
        y += band
    label = "width map" + (" and neighbour lengths" if wm and neighbours else "") if wm else "neighbour lengths"
    return (f"<svg width='{right + 20}' height='{y}' role='img' aria-label='{label}'>"
            "<defs><pattern id='untried' width='4' height='4' patternUnits='userSpaceOnUse'>"
            "<path d='M0,4 l4,-4' stroke='#999' stroke-width='1'/></pattern></defs>"
            f"{''.join(body)}</svg>")


def html(data: dict) -> str:
    wm = data.get("width_map")
    if not wm:
        return ""
    items = "".join(f"<li><span style='background:{_colour(c['class'])}'>&nbsp;{e(c['class'])}&nbsp;</span> "
                    f"{e(_class_words(c))}</li>" for c in wm["classes"])
    never = _never_words(wm)
    return (f"<h2>Width map (<code>--ladder {e(wm['ladder'])}</code>)</h2>"
            "<p>Each cell a width the ladder ran; widths whose complete token arrays are equal for every prompt share "
            "a class (colour and letter); A is the c1 run. ≈ marks a width with a tie flip (margin at the split "
            f"below {wm.get('near_tie_nats', 0.5):g} nats); a faded, dashed cell a width whose overlap was not "
            "proven; hatching, widths never tried."
            + (" The lower row: each <code>--neighbours</code> length, its class among the same colours (A: the "
               "outputs of the c1 run; hatched: not run)." if data.get("neighbours") else "") + "</p>"
            f"{picture(wm, data.get('neighbours'))}<p><b>{e(_first_words(wm))}</b></p><ul>{items}</ul>"
            + (f"<p><b>{e(never)}</b></p>" if never else ""))
