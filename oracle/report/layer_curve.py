"""The per-layer curve as an inline SVG picture: relative error by layer on a log scale, the band (the reference
repeat's limit) shaded, the first layer out of band marked.

    svg = curve_svg(data["localize"]["rows"], first="layers.7")
"""

from __future__ import annotations

import math

from oracle.report.page import e

__all__ = ["curve_svg"]

W, H, LEFT, RIGHT, TOP, BOTTOM = 640, 260, 56, 12, 14, 40
FLOOR = 1e-12  # a zero error is drawn on the floor of the scale (log 0 has no place)


def _log(v: float | str) -> float:
    """log10 of a value as localize.json holds it ("inf" / "nan": off the top of any scale oracle draws)."""
    return math.log10(max(v, FLOOR)) if isinstance(v, (int, float)) and math.isfinite(v) else 3.0


def curve_svg(rows: list[dict], *, first: str | None) -> str:
    """The whole layers' rows (and the embeddings where shown) as a curve; '' when there is nothing to draw."""
    points = [r for r in rows if r["whole"] or r["layer"] < 0]
    if not points:
        return ""
    values = [_log(r["relative_error"]) for r in points] + [_log(r["limit"]) for r in points]
    lo, hi = math.floor(min(values)) - 1, math.ceil(max(values))  # a decade under the band: its shade shows
    hi = hi if hi > lo else lo + 1
    n = len(points)
    x = lambda k: LEFT + (W - LEFT - RIGHT) * (k / max(n - 1, 1))  # noqa: E731
    y = lambda v: TOP + (H - TOP - BOTTOM) * (hi - _log(v)) / (hi - lo)  # noqa: E731
    bottom = H - BOTTOM
    band = " ".join(f"{x(k):.1f},{y(r['limit']):.1f}" for k, r in enumerate(points))
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='{H}' role='img' class=curve "
             f"aria-label='relative error by layer, log scale'>",
             f"<polygon class=band points='{x(0):.1f},{bottom} {band} {x(n - 1):.1f},{bottom}' fill='#d6e6ff'>"
             "<title>the band: twice the reference repeat's relative error, plus the floor</title></polygon>"]
    for decade in range(lo, hi + 1):
        yy = TOP + (H - TOP - BOTTOM) * (hi - decade) / (hi - lo)
        parts.append(f"<line x1='{LEFT}' x2='{W - RIGHT}' y1='{yy:.1f}' y2='{yy:.1f}' stroke='#ddd'/>"
                     f"<text x='{LEFT - 4}' y='{yy + 4:.1f}' font-size='10' text-anchor='end'>1e{decade}</text>")
    line = " ".join(f"{x(k):.1f},{y(r['relative_error']):.1f}" for k, r in enumerate(points))
    parts.append(f"<polyline class=error points='{line}' fill='none' stroke='#333' stroke-width='1.5'/>")
    for k, r in enumerate(points):
        marked = r["name"] == first
        parts.append(f"<circle cx='{x(k):.1f}' cy='{y(r['relative_error']):.1f}' r='{5 if marked else 2.5}' "
                     f"fill='{'#c00' if marked else ('#c66' if r['out_of_band'] else '#333')}'"
                     f"{' class=first' if marked else ''}><title>{e(r['name'])}: relative error "
                     f"{r['relative_error']}, band limit {r['limit']}</title></circle>")
        if marked:
            parts.append(f"<text x='{x(k) + 6:.1f}' y='{y(r['relative_error']) - 6:.1f}' font-size='11' "
                         f"fill='#c00'>first out of band: {e(r['name'])}</text>")
    step = max(1, n // 12)
    for k in range(0, n, step):
        parts.append(f"<text x='{x(k):.1f}' y='{bottom + 14}' font-size='10' text-anchor='middle'>"
                     f"{e(points[k]['name'].removeprefix('layers.'))}</text>")
    parts.append(f"<text x='{(LEFT + W) / 2:.0f}' y='{H - 6}' font-size='11' text-anchor='middle'>layer</text>"
                 "</svg>")
    return "".join(parts)
