"""Writing the reference at the end of a record run (one server, or the xdist controller's merged run):
only when every check passed, with its noise envelope, logits facts and what each check kind keeps of its
state (`CheckDescriptor.recorded`); the reference folder held by this run from its start.

    lock = record_lock(plan)     # before any request; None unless recording
    message = write_run_reference(plan, state, records, condition_rows, kept="reports/x/records", floor=None)
"""

from __future__ import annotations

import pytest

from oracle.checks import CHECKS
from oracle.compare.noise import NoiseEnvelope
from oracle.store.folders import FolderError, RecordLock
from oracle.store.records import Record
from oracle.store.reference import write_reference

__all__ = ["record_lock", "write_run_reference"]


def record_lock(plan) -> RecordLock | None:
    """The lock of the --record folder (its parent proven writable), or a usage error naming the fix."""
    if plan.mode != "record":
        return None
    try:
        return RecordLock.take(plan.options.record)
    except FolderError as exc:
        raise pytest.UsageError(str(exc)) from None


MAX_NAMED = 5  # failed checks named in the message


def write_run_reference(plan, state, records: list[Record], rows: dict[str, list[dict]], *, kept: str,
                        floor: dict | None = None) -> str:
    """The reference in --record, or why none was written (naming where the finished records are kept: `kept`);
    the state notes either way."""
    o = plan.options
    if state.verdict() != "pass":
        failed = [c.id for c in state.checks if c.outcome != "passed"]
        named = ", ".join(failed[:MAX_NAMED]) + (f" and {len(failed) - MAX_NAMED} more" if len(failed) > MAX_NAMED
                                                  else "")
        why = f"{len(failed)} check(s) did not pass: {named}" if failed else "the run did not finish"
        state.note(f"no reference was written: the run was not complete and clean ({why}); the finished records "
                   f"are kept in {kept}")
        return (f"no reference written to {o.record}: the record run did not pass ({why}); its finished records "
                f"are kept in {kept}")
    noise = NoiseEnvelope.from_rows(rows, determinism=state.determinism) if rows else None
    run = {"suite": state.suite, "logprobs": o.logprobs, "seed": o.seed, "max_tokens": o.max_tokens,
           "chat_template_sha256": state.identity.get("chat_template_sha256"),
           "tokenizer": state.identity.get("tokenizer")}
    if o.sampling is not None:  # a gate with other settings is refused (gate/plan.py)
        run["sampling"] = o.sampling.as_json()
    # What a logits gate needs to know about this reference: its dtype, top-k, tail mass and floor.
    logits = {"dtype": o.dtype if plan.in_process else None, "top_k": o.logprobs,
              "tail_mass": bool(records) and all(r.tail_mass for r in records), "backend": o.backend, "floor": floor}
    # The reference's speed card is rebuilt from its records' token times; what they cannot tell is kept here.
    speed = ({k: state.speed.get(k) for k in ("label", "diagnostics", "token_times", "warmup", "credible",
                                                "isolation", "power")}
             if state.speed else None)
    if state.speed_cells:  # the cells a later gate compares its own with, cell by cell
        speed = {**(speed or {}), "cells": state.speed_cells}
    kept_by_checks = {k: v for check in CHECKS if check.recorded is not None
                      for k, v in check.recorded(state.states[check.name]).items()}
    ref = write_reference(o.record, records, kind=o.reference_kind, identity=state.identity, run=run,
                          overwrite=o.record_overwrite,
                          noise=noise.as_json() if noise else None, logits=logits, speed=speed,
                          **kept_by_checks)
    state.recorded_reference = str(ref.path)
    return f"reference recorded in {ref.path}"
