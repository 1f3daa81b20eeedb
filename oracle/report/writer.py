"""The identity report on disk: identity.json (schema-versioned) and identity.md beside the records, and
identity.html once the run has ended.

Written at the start of a run (as `partial`), after every finished record, and at the end,
so a crash leaves the finished records and a partial report on disk.

    report = ReportFile(folder, state, SECTIONS); report.write()   # SECTIONS: oracle.checks.SECTIONS
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Sequence

import pytest

from oracle.redaction import public_text
from oracle.report.html import render_html
from oracle.report.markdown import markdown
from oracle.report.state import REPORT_SCHEMA_VERSION, ReportState
from oracle.store.folders import FolderError, preflight
from oracle.store.json_files import bad_file, read_json
from oracle.store.records import atomic_write_text
from oracle.store.seal import SEAL_KEY, seal_of
from oracle.store.shapes import REPORT_FIX, ReportShape

__all__ = ["REPORT_SCHEMA_VERSION", "ReportFile", "ReportOwner", "ReportState", "write_html", "write_report"]


class ReportFile:
    """A run's report: its state and the folder it is written to."""

    def __init__(self, folder: Path, state: ReportState, sections: Sequence[ModuleType]) -> None:
        self.folder, self.state, self.sections = folder, state, tuple(sections)
        self.write_error: str | None = None  # the first write that failed (a full disk), said at the end

    def write(self) -> dict:
        """Write the report; a failed write (the disk full) leaves the last one written in place and is remembered,
        to be said at the end of the run (the run goes on: its records are written on their own)."""
        try:
            return write_report(self.folder, self.state, self.sections)
        except OSError as exc:
            if self.write_error is None:
                self.write_error = (f"writing {exc.filename or self.folder} failed ({exc.strerror or exc}); the "
                                    f"report in {self.folder} is the last one written and may be partial; free "
                                    "space on that disk, or give --report-dir a writable folder")
            return self.state.as_json()


class ReportOwner:
    """What the plugin reads of whoever owns a run's report (a session, or the xdist controller)."""

    report: ReportFile

    @property
    def state(self) -> ReportState:
        return self.report.state

    @property
    def report_dir(self) -> Path:
        return self.report.folder

    def prepare_report_dir(self) -> None:
        """The report's folder made and proven writable before any request (a usage error naming the fix)."""
        try:
            preflight(self.report.folder, "--report-dir")
        except FolderError as exc:
            raise pytest.UsageError(str(exc)) from None


def write_report(folder: Path, state: ReportState, sections: Sequence[ModuleType]) -> dict:
    """identity.json and identity.md every time; identity.html once the run has ended (or stopped midway). The
    last write of a run (the session closed) seals the folder: identity.md is written first, so that it is sealed
    too; identity.html, which `oracle html` may write again, is not."""
    data = state.as_json()
    atomic_write_text(folder / "identity.md", markdown(data, sections))
    if state.closed:
        # The seal covers what the file holds: secrets masked (atomic_write_text writes the public text), else a
        # report whose launch command held a secret would read as edited after the run.
        data = _public(data)
        data[SEAL_KEY] = seal_of(folder, data, reference=_public(state.sealing.get("reference")),
                                 judged_under=_public(state.sealing.get("judged_under") or {}))
    atomic_write_text(folder / "identity.json", json.dumps(data, indent=1, sort_keys=False, default=str) + "\n")
    if state.closed or state.interruption:
        write_html(folder, sections, data)
    return data


def _public(value):
    """`value` as the report's file will hold it: every secret masked (`public_text`), through JSON."""
    return json.loads(public_text(json.dumps(value, default=str)))


def write_html(folder: Path, sections: Sequence[ModuleType], data: dict | None = None) -> Path:
    """identity.html from identity.json (read from folder when data is not given: an InputFileError naming the
    file when it is not a report oracle can render, and nothing written)."""
    if data is None:
        source = folder / "identity.json"
        data = read_json(source, ReportShape, fix=REPORT_FIX)
        try:
            page = render_html(data, sections)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            # The shape declares the keys the readers share; the page reads many more, of every section.
            raise bad_file(source, f"holds what no oracle report holds ({type(exc).__name__}: {exc})",
                           REPORT_FIX) from None
    else:
        page = render_html(data, sections)
    path = folder / "identity.html"
    atomic_write_text(path, page)
    return path
