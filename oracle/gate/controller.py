"""The xdist controller: it runs no items; it refuses servers of different configurations before any worker
starts, receives each worker's state, merges them into one report and, when recording, writes the reference
from each prompt's c1 record on the server that owned it.

Each worker writes its own partial report and records under `servers/serverK/` as it goes (so a
crash loses nothing) and, when it finishes, sends `worker_payload(session)` through `workeroutput`.
"""

from __future__ import annotations

import json

import pytest

from oracle.backends import RequestFailed
from oracle.checks import SECTIONS, state_part
from oracle.gate.merge import merge_workers
from oracle.gate.placement import server_label
from oracle.gate.plan import GatePlan
from oracle.gate.recording import record_lock, write_run_reference
from oracle.gate.server_set import differences, probe_identities
from oracle.report.writer import ReportFile, ReportOwner
from oracle.store.records import PRIMARY, Record, RecordKey, load_record

__all__ = ["XdistController", "worker_payload"]


def worker_payload(session) -> dict:
    """What a worker sends the controller: plain data only (execnet ships builtins)."""
    carried = {k: v for state in session.state.states.values() for k, v in state_part(state, "carried").items()}
    return {"server": session.worker, "url": session.backend.base_url if session.backend else None,
            "owned": sorted(session.owned) if session.owned is not None else None,
            "report_dir": str(session.report_dir), "state": json.loads(json.dumps(session.state.as_json(), default=str)),
            "carried": json.loads(json.dumps(carried, default=str))}


class XdistController(ReportOwner):
    def __init__(self, options) -> None:
        self.plan = GatePlan.open(options)
        self.options = self.plan.options
        self.report = ReportFile(self.plan.report_dir(), self.plan.new_state(), SECTIONS)
        self.plan.check_folders(self.report.folder)
        self.payloads: dict[int, dict | None] = {}
        if len(self.options.urls) > 1:
            self._check_servers()
        self.lock = record_lock(self.plan)  # the controller writes the reference, not the workers

    def _check_servers(self) -> None:
        """Refuse servers of different configurations before any worker starts (unless --allow-mixed-servers)."""
        o = self.options
        labels = {server_label(i): url for i, url in enumerate(o.urls[:o.workers])}
        try:
            found = differences(probe_identities(o.backend, labels))
        except RequestFailed as exc:
            raise pytest.UsageError(f"could not read a server's identity: {exc}; check that every listed server "
                                    "is up") from None
        if found and not o.allow_mixed_servers:
            raise pytest.UsageError("the servers are not one configuration; these identity fields differ:\n  "
                                    + "\n  ".join(found) + "\nserve the same model and flags on every server, or "
                                    "pass --allow-mixed-servers to gate them anyway")

    def note(self, text: str) -> None:
        self.state.note(text)

    def receive(self, worker: int, payload: dict | None) -> None:
        self.payloads[worker] = payload

    def finish(self) -> str | None:
        """Merge the workers' states into one report (and reference)."""
        self.state.closed = True
        try:
            if not self.payloads and not self.report.folder.exists():
                return None  # nothing ran (--collect-only)
            merge_workers(self.state, self.payloads, workers=self.options.workers, root=self.report.folder,
                          allow_mixed=self.options.allow_mixed_servers)
            message = None
            if self.plan.mode == "record" and self.payloads:
                message = write_run_reference(self.plan, self.state, self._owned_records(),
                                              kept=str(self.report.folder / "servers" / "server*" / "records"))
            self.report.write()
            return message
        finally:
            if self.lock is not None:
                self.lock.release()

    def _owned_records(self) -> list[Record]:
        """Each prompt's c1 record from the server that ran it as its own (for the reference)."""
        out = []
        for pid in self.state.prompt_ids:
            meta = self.state.finished.get(RecordKey(pid, PRIMARY))
            if meta is not None:
                out.append(load_record(self.report.folder / meta["folder"], PRIMARY, pid))
        return out
