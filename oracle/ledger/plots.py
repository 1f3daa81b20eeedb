"""The history page's figures, drawn by matplotlib as inline SVG (text kept as text, so the page needs no font or
network and its labels can be read and searched): the per-prompt strip and speed over time.

    svg = prompt_strip(group)        # one row per prompt, one column per run: exact / near-tie / divergent
    svg = speed_over_time(group)     # tok/s with its band, the speed-up with its 95% interval, J/token
"""

from __future__ import annotations

import io
import re

from oracle.ledger.queries import ConfigHistory, LedgerRun

__all__ = ["VERDICT_COLOURS", "prompt_strip", "run_label", "speed_over_time"]

VERDICT_COLOURS = {"exact": "#2e7d32", "recorded": "#1976d2", "pass": "#2e7d32", "within-reference-noise": "#81c784",
                   "near-tie": "#f9a825", "divergent": "#c62828", "contaminated": "#6a1b9a",
                   "inconclusive": "#757575", "not-run": "#bdbdbd", "fail": "#c62828"}
_OTHER = "#90a4ae"


def run_label(run: LedgerRun) -> str:
    """A run on an axis: its start time, short (2026-12-06T04:50:12Z -> 12-06 04:50)."""
    t = run.row["started_utc"]
    return f"{t[5:10]} {t[11:16]}" if len(t) >= 16 else t


def _figure(width: float, height: float):
    from matplotlib import rcParams
    from matplotlib.figure import Figure

    rcParams["svg.fonttype"] = "none"  # text as <text>, not paths
    rcParams["svg.hashsalt"] = "oracle-history"  # the same page for the same ledger
    return Figure(figsize=(width, height), layout="constrained")


def _svg(fig, title: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Title": title})
    text = buf.getvalue()
    text = re.sub(r"^.*?(?=<svg)", "", text, flags=re.S)  # inline: no XML prolog or DOCTYPE
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)


def prompt_strip(group: ConfigHistory) -> str:
    """Each prompt's verdict per run as a coloured cell, with the first split's position written in it."""
    names = sorted({p for run in group.runs for p in run.prompts})
    n = len(group.runs)
    fig = _figure(max(6.0, 2.0 + 0.9 * n), max(2.0, 1.2 + 0.35 * len(names)))
    ax = fig.add_subplot()
    for x, run in enumerate(group.runs):
        for y, name in enumerate(names):
            found = run.prompts.get(name)
            verdict = found["verdict"] if found else None
            ax.add_patch(_cell(x, y, VERDICT_COLOURS.get(verdict, _OTHER) if verdict else "#ffffff"))
            if found and found.get("first_split") is not None:
                ax.text(x, y, str(found["first_split"]), ha="center", va="center", fontsize=8, color="white")
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xticks(range(n), [run_label(r) for r in group.runs], rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_title("per-prompt verdict by run (number: first split position)", fontsize=9)
    ax.set_xlabel("run (UTC start)", fontsize=8)
    seen = sorted({p["verdict"] for run in group.runs for p in run.prompts.values()})
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=VERDICT_COLOURS.get(v, _OTHER), label=v) for v in seen], fontsize=7,
              loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return _svg(fig, f"per-prompt verdicts: {group.config}")


def _cell(x: int, y: int, colour: str):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.45, y - 0.45), 0.9, 0.9, facecolor=colour, edgecolor="white")


def speed_over_time(group: ConfigHistory) -> str | None:
    """tok/s (median over prompts, the p10..max band), the speed-up against the reference with its 95% interval
    as a band, and joules per token; None when no run of the group has a speed card."""
    runs = group.runs
    if not any(r.row["tok_s"] is not None for r in runs):
        return None
    xs = list(range(len(runs)))
    energy = any(r.row["joules_per_token"] is not None for r in runs)
    speedup = any(r.row["speedup"] is not None for r in runs)
    panels = 1 + energy + speedup
    fig = _figure(max(7.0, 2.0 + 0.9 * len(runs)), 2.2 * panels + 0.6)
    axes = fig.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    ax = axes[0]
    _line(ax, xs, runs, "tok_s", "tok_s_low", "tok_s_high", "median over prompts", "p10–max over prompts")
    ax.set_ylabel("tok/s", fontsize=8)
    figure = next((r.row["speed_figure"] for r in runs if r.row["speed_figure"]), "tok/s")
    ax.set_title(f"speed over time ({figure})", fontsize=9)
    k = 1
    if speedup:
        interval = next((r.row["speedup_interval"] for r in runs if r.row["speedup_interval"]), "")
        _line(axes[k], xs, runs, "speedup", "speedup_low", "speedup_high", "speed-up vs reference",
              f"95% interval {interval}".strip())
        axes[k].axhline(1.0, color="#9e9e9e", linewidth=0.8, linestyle="--")
        axes[k].set_ylabel("× reference", fontsize=8)
        k += 1
    if energy:
        ys = [r.row["joules_per_token"] for r in runs]
        axes[k].plot([x for x, y in zip(xs, ys) if y is not None], [y for y in ys if y is not None], marker="o",
                     color="#6d4c41", label="energy per token")
        axes[k].set_ylabel("J/token", fontsize=8)
        axes[k].legend(fontsize=7, loc="best")
    axes[-1].set_xticks(xs, [run_label(r) for r in runs], rotation=30, ha="right", fontsize=8)
    axes[-1].set_xlabel("run (UTC start)", fontsize=8)
    for x, run in enumerate(runs):  # a failing run is marked on every panel
        if not run.passed:
            for a in axes:
                a.axvline(x, color="#c62828", alpha=0.25, linewidth=6)
    return _svg(fig, f"speed over time: {group.config}")


def _line(ax, xs, runs, key: str, low: str, high: str, label: str, band: str) -> None:
    points = [(x, r.row[key], r.row[low], r.row[high]) for x, r in zip(xs, runs) if r.row[key] is not None]
    if not points:
        return
    ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", color="#1565c0", label=label)
    banded = [p for p in points if p[2] is not None and p[3] is not None]
    if banded:
        ax.fill_between([p[0] for p in banded], [p[2] for p in banded], [p[3] for p in banded], color="#1565c0",
                        alpha=0.2, label=band)
    ax.legend(fontsize=7, loc="best")
