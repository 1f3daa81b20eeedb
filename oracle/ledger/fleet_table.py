"""`oracle fleet`'s terminal table: per config one row per machine (its latest run), then the classes of machines
whose outputs are identical, the machines that stand apart, and what differs between machines that disagree.

    print(fleet_table(fleet))
    fleet_markdown(fleet)     # the same, for a CI job's summary or a Buildkite annotation
"""

from __future__ import annotations

from oracle.ledger.fleet import Fleet, FleetConfig, PairDifference
from oracle.ledger.queries import LedgerRun

__all__ = ["fleet_markdown", "fleet_table", "pair_lines", "speed_text"]

_WIDTH = 100  # an identity value longer than this is cut, the field's name stays whole
_PAIRS_SHOWN = 12  # per config; the page and the JSON-free table say how many more


def _short(value: str) -> str:
    return value if len(value) <= _WIDTH else value[:_WIDTH - 1] + "…"


def exact_text(run: LedgerRun) -> str:
    k, n = run.row["prompts_exact"], run.row["prompts_total"]
    return "-" if k is None or not n else f"{k}/{n}"


def speed_text(run: LedgerRun) -> str:
    """The speed figure with its label: '212.4 tok/s conventional_tok_s (diagnostic)'."""
    r = run.row
    if r["tok_s"] is None:
        return "-"
    return f"{r['tok_s']:.1f} tok/s {r['speed_figure'] or ''} ({r['speed_label'] or 'unlabelled'})"


def pair_lines(pair: PairDifference) -> list[str]:
    """What differs between two machines that disagree: the prompts, each launch flag, each identity field."""
    lines = [f"{pair.a} vs {pair.b}: {len(pair.prompts)} prompt(s) differ: {', '.join(pair.prompts) or '-'}"]
    fields = [f for f in pair.fields if f["field"] != "launch_command" or not pair.launch_changes]
    for flag in pair.launch_changes:
        lines.append(f"  flag: {flag}")
    for f in fields:
        lines.append(f"  {f['kind']}: {f['field']}: {_short(f['a'])} -> {_short(f['b'])}")
    if not fields and not pair.launch_changes:
        lines.append("  no identity field differs: the same configuration said other tokens on these machines")
    return lines


def _config_lines(config: FleetConfig) -> list[str]:
    lines = [f"{config.config}  (reference: {', '.join(config.references) or '-'})",
             f"  {'machine':16} {'class':5} {'verdict':12} {'exact':>6} {'speed':40} {'J/token':>8}  "
             f"{'accelerator':24} driver"]
    for machine, run in sorted(config.latest.items()):
        r = run.row
        joules = "-" if r["joules_per_token"] is None else f"{r['joules_per_token']:.3f}"
        lines.append(f"  {machine:16} {config.class_of(machine):5} {r['verdict']:12} {exact_text(run):>6} "
                     f"{speed_text(run):40} {joules:>8}  {str(r['accelerator_model'] or '-')[:24]:24} "
                     f"{r['driver'] or '-'}")
    for c in config.classes:
        lines.append(f"  class {c.label}: {', '.join(c.machines)} (identical outputs on {len(c.fingerprints)} "
                     f"prompt(s); top-k logprobs {c.top_k})")
    unclassed = [m for m in sorted(config.latest) if config.class_of(m) == "-"]
    if unclassed:
        lines.append(f"  no fingerprints (appended before them, or a run without records): {', '.join(unclassed)}")
    for apart in config.apart:
        lines.append(f"  stands apart ({apart.what}): {apart.machine}: {apart.detail}")
    for pair in config.pairs[:_PAIRS_SHOWN]:
        lines += [f"  {x}" for x in pair_lines(pair)]
    if len(config.pairs) > _PAIRS_SHOWN:
        lines.append(f"  … and {len(config.pairs) - _PAIRS_SHOWN} more pair(s) on the page")
    return lines


def fleet_table(fleet: Fleet) -> str:
    if not fleet.configs:
        return "the ledger holds no run"
    lines: list[str] = []
    for config in fleet.configs:
        lines += ["", *_config_lines(config)]
    failing = fleet.failing
    cells = sum(len(c.latest) for c in fleet.configs)
    lines += ["", f"{len(failing)} of {cells} machine x config fail in their latest run"
              + (": " + "; ".join(f"{m} · {c}" for c, m in failing) if failing else "")]
    return "\n".join(lines[1:])


def fleet_markdown(fleet: Fleet, *, page: str) -> str:
    """A CI summary: the verdict line, where the page is, the table as text."""
    failing = fleet.failing
    head = (f"**{len(failing)} machine x config fail in their latest run**" if failing
            else "**every machine's latest run of every config passes**")
    return f"## oracle fleet\n\n{head}; the page: `{page}`\n\n```\n{fleet_table(fleet)}\n```\n"
