"""The folders a gate run writes and the paths it reads, from its options, checked with `store.folder_safety`
before anything is written or sent (a usage error naming both paths and the fix).

    check_run_folders(options, report_dir, default=options.report_dir is None)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.gate.options import GateOptions
from oracle.run.suite import builtin_suite_path
from oracle.store.folder_safety import (Place, earlier_report_refusal, folder_refusal, name_refusal,
                                        reference_inside_refusal)

__all__ = ["check_run_folders", "read_places"]


def _runner_file(backend: str) -> Path | None:
    """The file of a python runner given as one (python:path/runner.py:FACTORY); None for a module name."""
    _, colon, locator = backend.partition(":")
    module = locator.rpartition(":")[0]
    return Path(module) if colon and module.endswith(".py") else None


def read_places(options: GateOptions) -> list[Place]:
    """Every folder and file the run reads that a user named."""
    reads = [Place("--reference", options.reference)] if options.reference else []
    if builtin_suite_path(options.suite) is None:
        reads.append(Place("--oracle-suite", Path(options.suite), file=True))
    # Each check's settings may name the files its options read (`paths_read`: (option, path) pairs).
    named = [pair for _, settings in options.checks for pair in getattr(settings, "paths_read", ())]
    for option, value in (*named, ("--tokenizer", options.tokenizer), ("--oracle-model", options.model)):
        if value:
            reads.append(Place(option, Path(value), file=Path(value).is_file()))
    runner = _runner_file(options.backend)
    if runner is not None:
        reads.append(Place("the runner of --backend", runner, file=True))
    return reads


def check_run_folders(options: GateOptions, report_dir: Path, *, default: bool,
                      marker: str = "identity.json") -> None:
    """Refuse (pytest.UsageError) a report folder or --record that overlaps what the run reads, or each other, and
    a report folder that holds an earlier report (its `marker`)."""
    report = Place("the default report folder" if default else "--report-dir", report_dir)
    writes = [report] + ([Place("--record", options.record)] if options.record else [])
    refusal = (next((r for r in map(name_refusal, writes) if r), None) or earlier_report_refusal(report, marker=marker)
               or folder_refusal(writes, read_places(options)) or reference_inside_refusal(report)
               or (reference_inside_refusal(writes[1], above_only=True) if options.record else None))
    if refusal:
        raise pytest.UsageError(refusal)
