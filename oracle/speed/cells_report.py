"""The speed cells in the report (identity.json's `speed.cells`): per cell its figure's median / p10 / min / max over
the cold repeats, the discarded warm-up, the cache proof, the energy, the samples, and against the reference's cells
the ratio: `interleaved` (both measured in this session, ABBA: a between-run interval) or `reference measured in
another run, no interval`.

    markdown(data)   # identity.md lines ([] without cells)
    html(data)       # identity.html, its own <h2> ("" without cells)
"""

from __future__ import annotations

from html import escape

from oracle.speed.campaign import REFERENCE_LABEL
from oracle.speed.cell_energy import energy_words

__all__ = ["PLACE", "html", "markdown", "rows"]

PLACE = 80  # page order (report/sections.py): --speed-cells: each cell against the reference's cells

_HEAD = ("cell", "measures", "status", "n", "median", "p10", "min", "max", "warm-up (discarded)", "cold", "short",
         "timestamps", "vs reference", "energy")


def _num(x) -> str:
    return "-" if x is None else f"{x:g}" if isinstance(x, int) else f"{x:.4g}"


def _cells(data: dict) -> dict | None:
    return (data.get("speed") or {}).get("cells")


def rows(block: dict) -> list[tuple[str, ...]]:
    """One row per cell, in the order they ran."""
    out = []
    for name, c in block["cells"].items():
        s = c.get("summary") or {}
        warm = c.get("warmup")
        warm_words = f"{_num(warm['value'])} ({warm['generated']} tok)" if warm else "-"
        cold = (c.get("cache") or {}).get("verdict", "-")
        energy = energy_words(c.get("energy")) if isinstance(c.get("energy"), dict) and "available" in c["energy"] \
            else ", ".join(f"{k} {v}" for k, v in (c.get("energy") or {}).items()) or "-"
        out.append((name, c.get("measures", "-"), c["status"] + (f": {c['reason']}" if c.get("reason") else ""),
                    str(s.get("samples", 0)), _num(s.get("median")), _num(s.get("p10")), _num(s.get("min")),
                    _num(s.get("max")), warm_words, cold, str(c.get("short", "-")),
                    (c.get("credible") or {}).get("verdict", "-"), _versus(name, c, block), energy))
    return out


def _versus(name: str, cell: dict, block: dict) -> str:
    v = cell.get("vs_reference")
    if v:
        if v.get("ci95") is None:
            return f"{v['measured']}: {v['label']}"
        lo, hi = v["ci95"]
        return f"{v['median']:.3g}x [{lo:.3g}, {hi:.3g}] ({v['measured']}, {v['interval']}, {v['label']})"
    r = ((block.get("vs_reference") or {}).get("ratios") or {}).get(name)
    return f"{r['ratio']:.3g}x ({REFERENCE_LABEL})" if r else "-"


def _header_lines(block: dict) -> list[str]:
    lines = [f"{block['repeats']} cold repeat(s) per cell after one same-shape warm-up (discarded); every prompt opens "
             f"with its own unique prefix (run nonce {block.get('nonce')}), the rest haystack token ids to the exact "
             "length; g1 cells: prompt tokens / TTFT; longer cells: decode rate (metric per cell below)"]
    lines.append(f"fixed length: {block['fixed_length']}" if block.get("fixed_length")
                 else f"fixed length not offered: {block.get('fixed_length_missing')}")
    metrics: dict[str, list[str]] = {}
    for name, c in block["cells"].items():
        if c.get("metric"):
            metrics.setdefault(c["metric"], []).append(name)
    lines += [f"{', '.join(names)}: {m}" for m, names in metrics.items()]
    ab = block.get("interleaved")
    if ab:
        lines.append(f"interleaved with the reference (--reference-launch, {ab['servers']}): each cell's repeats on "
                     f"both sides in ABBA order, the same warm-up and unique-prefix rules; {ab['method']}")
        lines.append("passes in order: " + "; ".join(ab["order"]))
    versus = block.get("vs_reference")
    if versus:
        said = ", ".join(f"{n} {r['ratio']:.2f}x ({_num(r['candidate'])} vs {_num(r['reference'])})"
                         for n, r in versus["ratios"].items()) or "no cell measured on both sides"
        lines.append(f"against the reference's cells ({versus['label']}): {said}")
    return lines


def _samples(block: dict) -> list[str]:
    out = []
    for name, c in block["cells"].items():
        if c.get("samples"):
            out.append(f"{name}: " + ", ".join(_num(s["value"]) for s in c["samples"]))
        ref = c.get("reference")
        if ref and ref.get("samples"):
            out.append(f"{name} (reference): " + ", ".join(_num(s["value"]) for s in ref["samples"])
                       + f"; cold {ref['cache']['verdict']}; energy {energy_words(ref.get('energy'))}")
    return out


def markdown(data: dict) -> list[str]:
    block = _cells(data)
    if not block:
        return []
    lines = ["", "## Speed cells", ""] + [f"- {x}" for x in _header_lines(block)] + [""]
    lines += ["| " + " | ".join(_HEAD) + " |", "| " + " | ".join("---" for _ in _HEAD) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows(block)]
    samples = _samples(block)
    if samples:
        lines += ["", "Every sample (tok/s, in the order sent):", ""] + [f"- {x}" for x in samples]
    return lines


def html(data: dict) -> str:
    block = _cells(data)
    if not block:
        return ""
    e = escape
    head = "<h2>Speed cells</h2>" + "".join(f"<p>{e(x)}</p>" for x in _header_lines(block))
    table = ("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in _HEAD) + "</tr>"
             + "".join("<tr>" + "".join(f"<td>{e(x)}</td>" for x in r) + "</tr>" for r in rows(block)) + "</table>")
    samples = "".join(f"<p class=mono>{e(x)}</p>" for x in _samples(block))
    return head + table + samples
