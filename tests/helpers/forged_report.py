"""A failing report edited to pass, as the issue's example (#52) edits one: identity.json's verdict, its summary and
every item made to pass, the records left as the run wrote them. `reseal=True` also gives the edit a seal hash that
matches (a careful forger): only re-deriving the verdicts from the records can find it then.

    forge(folder, reseal=True)      # the folder's identity.json rewritten in place
"""

from __future__ import annotations

import json
from pathlib import Path

from oracle.store.seal import SEAL_KEY, SELF_KEY, content_digest

__all__ = ["forge", "reseal"]


def reseal(report: dict) -> dict:
    """The report with its seal's own hash made to match its (edited) content."""
    if SEAL_KEY in report:
        report[SEAL_KEY][SELF_KEY] = content_digest(report)
    return report


def forge(folder: Path, *, reseal_it: bool) -> dict:
    path = folder / "identity.json"
    report = json.loads(path.read_text())
    checks = report["checks"]
    for c in checks:
        if c["kind"] == "tokens":
            c["verdict"] = "exact"
        c["outcome"] = "passed"
    report["verdict"] = "pass"
    s = report["summary"]
    s["exact"] = [len(report["prompts"]), len(report["prompts"])]
    s["near_tie"] = s["divergent"] = 0
    s["checks_passed"] = [len(checks), len(checks)]
    if reseal_it:
        reseal(report)
    path.write_text(json.dumps(report, indent=1) + "\n")
    return report
