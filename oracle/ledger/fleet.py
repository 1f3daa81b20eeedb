"""The fleet as the ledger holds it: per config, each machine's latest run, the classes of machines whose outputs
are identical (by fingerprint), the machine that stands apart from the others of its accelerator model (outputs,
speed residual), and for each pair of machines whose outputs differ, the identity fields that differ.

    fleet = read_fleet(ledger)
    for config in fleet.configs: config.cells, config.classes, config.apart, config.pairs
    fleet.failing      # (config, machine) whose latest run fails: `oracle fleet` exits 1
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from oracle.ledger.connect import Ledger, failure
from oracle.ledger.queries import LedgerRun, change_between
from oracle.ledger.residuals import RESIDUAL_LIMIT, outputs_apart, speed_residuals
from oracle.ledger.schema import prompts, runs

__all__ = ["Apart", "Fleet", "FleetConfig", "OutputClass", "PairDifference", "read_fleet"]

NO_CLASS = "-"  # a machine whose latest run holds no fingerprints (appended before them, or no records)
_MACHINE_FIELDS = "machine."  # the machine's own name and what is derived from fields listed anyway


@dataclass
class OutputClass:
    label: str  # A, B, ...: the largest class first
    machines: list[str]
    fingerprints: dict[str, str]  # prompt -> fingerprint
    top_k: str  # "identical", "differ" or "not recorded": the classes' machines' top-k logprobs


@dataclass
class Apart:
    machine: str
    what: str  # "outputs" or "speed"
    detail: str
    residual: float | None = None


@dataclass
class PairDifference:
    a: str
    b: str
    prompts: list[str]  # the prompts whose outputs differ
    fields: list[dict]  # identity_changes rows with their kind (flag, driver, package, ...)
    launch_changes: list[str]


@dataclass
class FleetConfig:
    config: str
    latest: dict[str, LedgerRun]  # machine -> its latest run of this config
    classes: list[OutputClass] = field(default_factory=list)
    apart: list[Apart] = field(default_factory=list)
    pairs: list[PairDifference] = field(default_factory=list)

    def class_of(self, machine: str) -> str:
        return next((c.label for c in self.classes if machine in c.machines), NO_CLASS)

    @property
    def references(self) -> list[str]:
        return sorted({r.row["reference"] for r in self.latest.values() if r.row["reference"]})

    @property
    def failing(self) -> list[str]:
        return [m for m, r in sorted(self.latest.items()) if not r.passed]


@dataclass
class Fleet:
    configs: list[FleetConfig]

    @property
    def machines(self) -> list[str]:
        return sorted({m for c in self.configs for m in c.latest})

    @property
    def failing(self) -> list[tuple[str, str]]:
        return [(c.config, m) for c in self.configs for m in c.failing]


def read_fleet(ledger: Ledger, *, since: str | None = None) -> Fleet:
    """Each (config, machine)'s latest run with its prompts' fingerprints, and what the fleet makes of them."""
    query = select(runs).order_by(runs.c.started_utc, runs.c.id)
    if since:
        query = query.where(runs.c.started_utc >= since)
    try:
        with ledger.engine.connect() as c:
            latest: dict[tuple[str, str], LedgerRun] = {}
            for r in c.execute(query):
                latest[(r.config, r.machine)] = LedgerRun(dict(r._mapping))  # time order: the last one stays
            by_id = {run.row["id"]: run for run in latest.values()}
            if by_id:
                for p in c.execute(select(prompts).where(prompts.c.run_id.in_(list(by_id)))):
                    by_id[p.run_id].prompts[p.prompt] = {"verdict": p.verdict, "first_split": p.first_split,
                                                         "fingerprint": p.fingerprint, "top_sha256": p.top_sha256}
    except SQLAlchemyError as exc:
        raise failure(ledger, "read", exc) from None
    configs: dict[str, dict[str, LedgerRun]] = {}
    for (config, machine), run in sorted(latest.items()):
        configs.setdefault(config, {})[machine] = run
    return Fleet([_analyse(FleetConfig(config, cells)) for config, cells in configs.items()])


def _fingerprints(run: LedgerRun) -> dict[str, str] | None:
    found = {p: v["fingerprint"] for p, v in run.prompts.items() if v.get("fingerprint")}
    return found if found and len(found) == len(run.prompts) else None


def _classes(latest: dict[str, LedgerRun]) -> list[OutputClass]:
    grouped: dict[tuple, list[str]] = {}
    for machine, run in sorted(latest.items()):
        found = _fingerprints(run)
        if found is not None:
            grouped.setdefault(tuple(sorted(found.items())), []).append(machine)
    ordered = sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    out = []
    for label, (key, machines) in zip(_labels(), ordered):
        tops = {tuple(sorted((p, v.get("top_sha256")) for p, v in latest[m].prompts.items())) for m in machines}
        recorded = all(v.get("top_sha256") for m in machines for v in latest[m].prompts.values())
        top_k = "not recorded" if not recorded else "identical" if len(tops) == 1 else "differ"
        out.append(OutputClass(label, machines, dict(key), top_k))
    return out


def _labels():
    yield from string.ascii_uppercase
    n = 1
    while True:
        yield from (f"{c}{n}" for c in string.ascii_uppercase)
        n += 1


def _analyse(config: FleetConfig) -> FleetConfig:
    config.classes = _classes(config.latest)
    by_model: dict[str, list[str]] = {}
    for machine, run in config.latest.items():
        by_model.setdefault(run.row["accelerator_model"] or run.row["accelerator"] or "unknown", []).append(machine)
    for model, machines in sorted(by_model.items()):
        labels = {m: config.class_of(m) for m in machines if config.class_of(m) != NO_CLASS}
        for machine, majority in outputs_apart(labels).items():
            config.apart.append(Apart(machine, "outputs", f"class {labels[machine]}, while the other {model} "
                                                          f"machines mostly say class {majority}"))
        config.apart += _speed_apart(config, machines, model)
    config.pairs = _pairs(config)
    return config


def _speed_apart(config: FleetConfig, machines: list[str], model: str) -> list[Apart]:
    """Per speed figure (only like with like): the machines whose residual is past RESIDUAL_LIMIT."""
    out = []
    figures: dict[str, dict[str, float]] = {}
    for m in machines:
        row = config.latest[m].row
        if row["tok_s"]:
            figures.setdefault(f"{row['speed_figure']} ({row['speed_label']})", {})[m] = row["tok_s"]
    for figure, speeds in sorted(figures.items()):
        for machine, residual in sorted(speed_residuals(speeds).items()):
            if abs(residual) > RESIDUAL_LIMIT:
                side = "slower" if residual < 0 else "faster"
                out.append(Apart(machine, "speed", f"{speeds[machine]:.1f} tok/s {figure}: {side} than the other "
                                                   f"{model} machines (residual {residual:+.1f})", residual))
    return out


def _pairs(config: FleetConfig) -> list[PairDifference]:
    """Every pair of machines in different classes: the prompts that differ and the identity fields that do."""
    out = []
    placed = [(m, c.label) for c in config.classes for m in c.machines]
    for i, (a, label_a) in enumerate(placed):
        for b, label_b in placed[i + 1:]:
            if label_a == label_b:
                continue
            run_a, run_b = config.latest[a], config.latest[b]
            fa, fb = _fingerprints(run_a) or {}, _fingerprints(run_b) or {}
            differ = sorted(p for p in set(fa) | set(fb) if fa.get(p) != fb.get(p))
            change = change_between(run_a, run_b)
            fields = [f for f in change.fields if not f["field"].startswith(_MACHINE_FIELDS)]
            out.append(PairDifference(a, b, differ, fields, change.launch_changes))
    return out
