"""What the ledger says over time: the runs (filtered by --since, --machine, --backend), grouped by machine and
config in time order, each config's changes of verdict, and for each change from pass to fail what changed
between the last passing run and the first failing one.

    history = read_history(ledger, since="2026-12-01", machine=None, backend=None)
    for group in history.groups: group.runs[-1].verdict, group.changes
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from oracle.launch_command import LaunchError, describe, differences, parse_launch
from oracle.ledger.connect import Ledger, failure
from oracle.ledger.schema import canaries, prompts, runs
from oracle.redaction import MASK
from oracle.report.diff import identity_changes

__all__ = ["Change", "ConfigHistory", "History", "LedgerRun", "kind_of", "read_history"]

PASSING = ("pass",)
# What kind of change an identity field is, by its first dotted part (`oracle diff`'s field names).
_KINDS = {"launch_command": "flag", "server_args": "flag", "environment": "environment variable",
          "packages": "package", "oracle_version": "package", "accelerator": "driver", "server": "build",
          "model": "model", "chat_template_sha256": "model", "tokenizer": "model", "host": "host"}


@dataclass
class LedgerRun:
    row: dict
    prompts: dict[str, dict] = field(default_factory=dict)  # prompt -> {verdict, first_split}
    canaries: dict[str, str] = field(default_factory=dict)

    def __getattr__(self, name: str):
        try:
            return self.__dict__["row"][name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def passed(self) -> bool:
        return self.row["verdict"] in PASSING

    @property
    def shown_verdict(self) -> str:
        """The verdict as history shows it: a run the audit could not re-derive (ledger/audit.py) says so, never a
        plain pass."""
        unverified = self.row.get("audit", "unverified") != "verified"
        return f"{self.row['verdict']} (unverified)" if unverified else self.row["verdict"]

    @property
    def identity(self) -> dict:
        return json.loads(self.row["identity_json"])


@dataclass
class Change:
    """A change of verdict in one config: the last passing run, the first failing one and what differs."""
    last_pass: LedgerRun
    first_fail: LedgerRun
    fields: list[dict]  # identity_changes rows, each with its "kind"
    launch_changes: list[str]  # the launch flags that differ, as `oracle bisect` names them
    bisect: str | None  # the command line that bisects the launch differences


@dataclass
class ConfigHistory:
    machine: str
    config: str
    runs: list[LedgerRun]
    changes: list[Change]

    @property
    def latest_failed(self) -> bool:
        return not self.runs[-1].passed


@dataclass
class History:
    groups: list[ConfigHistory]

    @property
    def failing(self) -> list[ConfigHistory]:
        return [g for g in self.groups if g.latest_failed]


def kind_of(field_name: str) -> str:
    return _KINDS.get(field_name.split(".")[0], "identity")


def read_history(ledger: Ledger, *, since: str | None = None, machine: str | None = None,
                 backend: str | None = None) -> History:
    """Every run the filters keep, grouped by (machine, config), oldest first."""
    query = select(runs).order_by(runs.c.started_utc, runs.c.id)
    if since:
        query = query.where(runs.c.started_utc >= since)
    if machine:
        query = query.where(runs.c.machine == machine)
    if backend:
        query = query.where(runs.c.backend == backend)
    try:
        with ledger.engine.connect() as c:
            found = [LedgerRun(dict(r._mapping)) for r in c.execute(query)]
            by_id = {r.row["id"]: r for r in found}
            for p in c.execute(select(prompts)):
                if p.run_id in by_id:
                    by_id[p.run_id].prompts[p.prompt] = {"verdict": p.verdict, "first_split": p.first_split}
            for k in c.execute(select(canaries)):
                if k.run_id in by_id:
                    by_id[k.run_id].canaries[k.canary] = k.verdict
    except SQLAlchemyError as exc:
        raise failure(ledger, "read", exc) from None
    grouped: dict[tuple[str, str], list[LedgerRun]] = {}
    for run in found:
        grouped.setdefault((run.row["machine"], run.row["config"]), []).append(run)
    return History([ConfigHistory(m, c, rs, _changes(rs)) for (m, c), rs in sorted(grouped.items())])


def _changes(history: list[LedgerRun]) -> list[Change]:
    out, last_pass = [], None
    for before, run in zip([None, *history], history):
        if run.passed:
            last_pass = run
        elif last_pass is not None and before is not None and before.passed:
            out.append(change_between(last_pass, run))
    return out


def change_between(good: LedgerRun, bad: LedgerRun) -> Change:
    rows = [{**r, "kind": kind_of(r["field"])} for r in identity_changes(good.identity, bad.identity)]
    launch, bisect = _launch_changes(good, bad)
    return Change(good, bad, rows, launch, bisect)


def _launch_changes(good: LedgerRun, bad: LedgerRun) -> tuple[list[str], str | None]:
    """The launch flags that differ and the `oracle bisect` line over them (none when a command is unknown, or
    holds a redacted secret that cannot be run again as recorded)."""
    a, b = good.row["launch_command"], bad.row["launch_command"]
    if not a or not b or a == b:
        return [], None
    try:
        changes = [describe(c) for c in differences(parse_launch(a), parse_launch(b))]
    except LaunchError:
        return [], None
    if not changes or MASK in a or MASK in b:
        return changes, None
    return changes, (f"oracle bisect --backend {shlex.quote(bad.row['backend'])} --good {shlex.quote(a)} "
                     f"--bad {shlex.quote(b)}")
