"""Writing the reference at the end of a record run (one server, or the xdist controller's merged run):
only when every check passed, with what each check kind keeps of its state (`CheckDescriptor.for_reference`); the reference folder held by this run from its start.

    lock = record_lock(plan)     # before any request; None unless recording
    message = write_run_reference(plan, state, records, kept="reports/x/records")
"""

from __future__ import annotations

import pytest

from oracle.checks import CHECKS
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


def write_run_reference(plan, state, records: list[Record], *, kept: str) -> str:
    """The reference in --record, or why none was written (naming where the finished records are kept: `kept`);
    the state notes either way. Each check kind adds what it keeps of its state (`CheckDescriptor.for_reference`, of
    the run's state or the merged one): its blocks of the manifest, by its own keys."""
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
    # What each check keeps of its part of the report (its blocks: the noise envelope, the logits facts, canaries,
    # the speed card; what it adds to `run`; its own completions).
    keeps = [c.for_reference(state.states[c.name], plan, records) for c in CHECKS
            if c.for_reference is not None and c.name in state.states]
    run = {"suite": state.suite, "logprobs": o.logprobs, "seed": o.seed, "max_tokens": o.max_tokens,
           "chat_template_sha256": state.identity.get("chat_template_sha256"),
           "tokenizer": state.identity.get("tokenizer")}
    for k in keeps:
        run |= k.run  # the needle lengths this run sent (a budget may have dropped some)
    if o.sampling is not None:  # a gate with other settings is refused (gate/plan.py)
        run["sampling"] = o.sampling.as_json()
    ref = write_reference(o.record, records, kind=o.reference_kind, identity=state.identity, run=run,
                          overwrite=o.record_overwrite, blocks={key: v for k in keeps for key, v in k.blocks.items()},
                          side_records={key: v for k in keeps for key, v in k.side_records.items()})
    state.recorded_reference = str(ref.path)
    return f"reference recorded in {ref.path}"
