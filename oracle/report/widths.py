"""The width map section: per width the class of outputs (class A is the c1 run every width is compared with),
the first width that parts from c1, per class its prompts and first split positions, and the widths a plain
`--ladder` list never tried; in identity.html one picture (width on the x axis, class as colour, near-ties
marked); the same few lines for the terminal (`terminal_lines`).

    lines = markdown(data); page = html(data); terminal_lines(data["width_map"])
"""

from __future__ import annotations

from oracle.compare.width_map import width_words
from oracle.report.page import e

__all__ = ["PLACE", "html", "markdown", "terminal_lines"]

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


def _picture(wm: dict) -> str:
    """Inline SVG: one cell per width tried (x: width, in order; a hatched gap where widths were skipped), its
    class as colour and letter; ≈ above a width with a tie flip; a dashed outline where the overlap is unproven."""
    cell, gap, top = 26, 10, 18
    x, parts, ticks = 40, [], []
    previous = 0
    for w in wm["widths"]:
        if w["width"] > previous + 1:  # widths never tried between two tried ones
            parts.append(f"<rect x='{x}' y='{top}' width='{gap}' height='{cell}' fill='url(#untried)' "
                         f"stroke='#bbb'><title>widths {width_words(range(previous + 1, w['width']))} "
                         "never tried</title></rect>")
            x += gap + 2
        previous = w["width"]
        dash = "" if w["proven"] else " stroke-dasharray='3 2' fill-opacity='0.45'"
        tip = (f"c{w['width']}: class {w['class']}, {w['split_records']}/{w['records']} records split from c1, "
               f"{w['tie_flips']} tie flip(s), {w['confident_flips']} confident" + ("" if w["proven"] else
                                                                                  ", overlap not proven"))
        parts.append(f"<g><title>{e(tip)}</title><rect x='{x}' y='{top}' width='{cell}' height='{cell}' "
                     f"fill='{_colour(w['class'])}' stroke='#333'{dash}/>"
                     f"<text x='{x + cell / 2}' y='{top + 17}' font-size='12' text-anchor='middle'>"
                     f"{e(w['class'])}</text></g>")
        if w["tie_flips"]:
            parts.append(f"<text x='{x + cell / 2}' y='{top - 4}' font-size='13' text-anchor='middle'>≈</text>")
        ticks.append(f"<text x='{x + cell / 2}' y='{top + cell + 14}' font-size='11' text-anchor='middle'>"
                     f"{w['width']}</text>")
        x += cell + 2
    width = x + 20
    return (f"<svg width='{width}' height='{top + cell + 34}' role='img' aria-label='width map'>"
            "<defs><pattern id='untried' width='4' height='4' patternUnits='userSpaceOnUse'>"
            "<path d='M0,4 l4,-4' stroke='#999' stroke-width='1'/></pattern></defs>"
            f"<text x='0' y='{top + 17}' font-size='11'>class</text>{''.join(parts)}"
            f"<text x='0' y='{top + cell + 14}' font-size='11'>width</text>{''.join(ticks)}</svg>")


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
            "proven; hatching, widths never tried.</p>"
            f"{_picture(wm)}<p><b>{e(_first_words(wm))}</b></p><ul>{items}</ul>"
            + (f"<p><b>{e(never)}</b></p>" if never else ""))
