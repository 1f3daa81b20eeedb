"""A new check kind is one package plus one line: a toy kind written here into a temporary folder (its package,
and the one line that registers it: an `oracle.checks` entry point, as a package installed apart from oracle
declares it; a kind inside oracle is its name in `oracle.checks.KINDS`) runs in a real gate against the session's
llama-server. Its plan cost is in `--oracle-plan`, its section in identity.json and identity.md, its verdict
counted, and a planted fault fails the gate (exit 1) — with no line of oracle changed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import gate_argv, gate_env, tiny_rows, write_suite

# The toy kind: the first prompt sent again alone must give the primary run's tokens. Its descriptor, state,
# producer, plan cost and report section in one module (the package's __init__.py). TOY_PLANT=1 plants a fault
# in its comparison (the server gives no way to make one repeat alone differ).
TOY = '''"""A toy check kind: the first prompt, sent again alone, gives the primary run's tokens."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from oracle.checks.descriptor import CheckDescriptor, CheckItem, Finding, PlanPart, Producers, SectionState
from oracle.compare.verdicts import FAIL, PASS, Check
from oracle.run.runner import one_at_a_time
from oracle.store.records import PRIMARY, Condition

AGAIN = Condition(run=9)
PLACE = 135  # its section on the page, between the canaries' and the checks'


class ToyState(SectionState):
    KEYS = ("toy",)
    PLACES = {"toy": 155, "summary.toy_same": 125}  # after token_match; in the summary before `confidence`

    def summary(self, report) -> dict:
        return {"toy_same": (self.report or {}).get("same")}


def markdown(data: dict) -> list[str]:
    toy = data.get("toy")
    return ["## Toy", "", f"first prompt again: same tokens {toy['same']}", ""] if toy else []


def html(data: dict) -> str:
    toy = data.get("toy")
    return f"<h2>Toy</h2><p>first prompt again: same tokens {toy['same']}</p>" if toy else ""


def items(plan) -> list[CheckItem]:
    return [CheckItem("toy", "toy")] if plan.mode == "gate" else []


def plan_part(kind, key, context) -> PlanPart:
    return PlanPart("toy: first prompt again", context.suite[:1], note="the toy's own request")


def build(parts) -> Producers:
    def answer() -> Finding:
        first = parts.prompts.rendered[0]
        result = parts.recorder.run(AGAIN, one_at_a_time([first]))
        again = result.records[0].completion_ids
        primary = list(parts.recorder.records[first.id].completion_ids)
        if os.environ.get("TOY_PLANT") == "1":
            primary[0] += 1
        same = list(again) == primary
        verdict = PASS if same else FAIL
        return Finding(Check("toy", "toy", verdict, f"first prompt again: same tokens {same}"),
                       {"toy": {"same": same, "tokens": len(again)}})
    return Producers({"toy": answer})


CHECK = CheckDescriptor(name="toy_check", title="toy", order=60, kinds=("toy",), items=items, build=build,
                        state=ToyState, sections=(sys.modules[__name__],), plan_part=plan_part)
'''
ENTRY_POINT = 'toy_check = toy_check'  # the one line: [oracle.checks] in entry_points.txt


def _plant(root: Path) -> list[str]:
    """The toy kind's package and its one registering line; the files it needed, relative to `root`."""
    (root / "toy_check").mkdir()
    (root / "toy_check" / "__init__.py").write_text(TOY)
    info = root / "toy_check-0.dist-info"  # what `pip install` of a package declaring the entry point leaves
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-check\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[oracle.checks]\n{ENTRY_POINT}\n")
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _gate(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = gate_env()
    environment["PYTHONPATH"] = os.pathsep.join([str(root / "kind"), environment.get("PYTHONPATH", "")])
    return subprocess.run(gate_argv("-q", *args), cwd=root, capture_output=True, text=True, timeout=600,
                          env=environment | (env or {}))


def test_a_toy_check_kind_is_one_package_and_one_line(shared_server, shared_reference, tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # a rootdir of its own, away from the project's tests
    (tmp_path / "kind").mkdir()
    assert _plant(tmp_path / "kind") == ["toy_check-0.dist-info/METADATA", "toy_check-0.dist-info/entry_points.txt",
                                         "toy_check/__init__.py"]
    suite = write_suite(tmp_path, "tiny", tiny_rows())
    common = (f"--oracle-url={shared_server.url}", f"--oracle-suite={suite}", "--max-tokens=32", "--canaries=none",
              f"--reference={shared_reference}")

    plan = _gate(tmp_path, *common, "--oracle-plan", f"--report-dir={tmp_path / 'plan'}")
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-2000:]
    assert "toy: first prompt again" in plan.stdout and "the toy's own request" in plan.stdout

    gate = _gate(tmp_path, *common, f"--report-dir={tmp_path / 'gate'}")
    assert gate.returncode == 0, gate.stdout[-3000:] + gate.stderr[-2000:]
    data = json.loads((tmp_path / "gate" / "identity.json").read_text())
    toy = next(c for c in data["checks"] if c["kind"] == "toy")
    assert toy["verdict"] == "pass" and data["toy"] == {"same": True, "tokens": toy_tokens(data)}
    assert data["summary"]["toy_same"] is True
    assert data["summary"]["checks_passed"] == [len(data["checks"]), len(data["checks"])]
    keys = list(data)  # its section at its place: after token_match, before runs
    assert keys.index("token_match") < keys.index("toy") < keys.index("runs")
    assert "first prompt again: same tokens True" in (tmp_path / "gate" / "identity.md").read_text()
    assert "<h2>Toy</h2>" in (tmp_path / "gate" / "identity.html").read_text()

    planted = _gate(tmp_path, *common, f"--report-dir={tmp_path / 'planted'}", env={"TOY_PLANT": "1"})
    assert planted.returncode == 1, planted.stdout[-3000:] + planted.stderr[-2000:]
    data = json.loads((tmp_path / "planted" / "identity.json").read_text())
    assert next(c for c in data["checks"] if c["kind"] == "toy")["verdict"] == "fail"
    assert data["verdict"] == "fail" and data["summary"]["toy_same"] is False
    passed, total = data["summary"]["checks_passed"]
    assert passed == total - 1


def toy_tokens(data: dict) -> int:
    """The first prompt's completion length in the primary run."""
    first = data["prompts"][0]
    return next(v["completion_tokens"] for k, v in data["records"]["finished"].items()
                if k == f"{first}@boot1-c1")
