"""The fleet for real: the recipes' own commands (examples/fleet/) run on this machine under three machine names,
each in a workspace of its own with its own copy of one reference, appending to one real PostgreSQL ledger.

- the GitHub workflow's gate step for ci-a (the shared embedded llama-server) and ci-b (the embedded server
  started with `--server-args=-ctk q8_0`, a q8_0 K cache that splits a prompt of the tiny suite) at the same time;
  its page step: two classes, the flag that differs, exit 1;
- the Buildkite pipeline's gate step for ci-c (the shared server again): it joins ci-a's class; its page step
  writes the annotation through `buildkite-agent` (a stand-in on PATH that keeps what it was given: the agent is
  not installed here);
- fleet.html in real Chromium, offline: the grid and the classes drawn, no request outside the file.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest

from browser import headless_chromium, png_distinct_bytes
from conftest import NO_WARMUP, gate_env, tiny_rows, write_suite
from fleet_recipes import buildkite_step, github_job

pytestmark = pytest.mark.slow

GATE_ARGS = " ".join(("--oracle-suite=tiny.jsonl", "--max-tokens=32", "--canaries=none", *NO_WARMUP))
AGENT = """#!/bin/sh
# buildkite-agent's stand-in: what the step gave it, kept for the test
echo "$*" >> "$(dirname "$0")/agent-calls"
if [ "$1" = annotate ]; then cat > "$(dirname "$0")/annotation.md"; fi
"""


def _workspace(root: Path, name: str, reference: Path) -> Path:
    """A runner's checkout: a rootdir of its own, the tiny suite, the reference copied in (another path each)."""
    folder = root / name
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n")
    write_suite(folder, "tiny", tiny_rows())
    shutil.copytree(reference, folder / "ref")
    return folder


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = gate_env()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])  # pytest, oracle
    return {**env, **(extra or {})}


def _done(proc, name: str) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=600)
    return proc.returncode, f"--- {name} (exit {proc.returncode})\n{out[-4000:]}"


@pytest.fixture(scope="module")
def fleet(postgresql, shared_server, shared_reference, tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    url = postgresql.database("fleet")
    secrets, variables = {"ORACLE_LEDGER": url}, {"ORACLE_REFERENCE": "ref", "ORACLE_GATE_ARGS": GATE_ARGS}
    machines = {"ci-a": {"machine": "ci-a", "backend": "llamacpp", "url": shared_server.url},
                "ci-b": {"machine": "ci-b", "backend": "llamacpp", "server_args": "-ctk q8_0"}}
    started = {name: github_job("gate", entry, secrets=secrets, variables=variables, step="gate")
               .start(cwd=_workspace(root, name, shared_reference), env=_env())
               for name, entry in machines.items()}  # both at once, on one fresh ledger
    results = {name: _done(proc, name) for name, proc in started.items()}
    assert results["ci-a"][0] == 0 and results["ci-b"][0] == 1, "\n".join(r[1] for r in results.values())
    return root, url, postgresql.password, shared_server


def test_two_machines_two_classes_the_flag_and_exit_1(fleet):
    root, url, password, _ = fleet
    page = github_job("fleet", {}, secrets={"ORACLE_LEDGER": url}, variables={}, step="page")
    summary = root / "summary.md"
    code, out = _done(page.start(cwd=root, env=_env({"GITHUB_STEP_SUMMARY": str(summary)})), "page")
    assert code == 1, out
    config = re.search(r"llamacpp vs reference ([0-9a-f]{16})  \(reference: ref\)", out)
    assert config, out  # one config: the copies' manifest sha256, though each workspace holds its own copy
    assert "class A: ci-a (identical outputs on 3 prompt(s)" in out and "class B: ci-b (identical outputs" in out
    assert re.search(r"ci-a +A +pass +3/3 ", out) and re.search(r"ci-b +B +fail ", out), out
    assert re.search(r"ci-a vs ci-b: [12] prompt\(s\) differ: ", out), out
    assert "flag: server_args: None -> -ctk q8_0" in out.split("ci-a vs ci-b:")[1]
    assert "1 of 2 machine x config fail in their latest run: ci-b · llamacpp vs reference" in out
    assert password not in out and password not in summary.read_text()
    assert "## oracle fleet" in summary.read_text() and "class B: ci-b" in summary.read_text()
    assert (root / "fleet.html").is_file()


def test_a_third_machine_like_the_first_joins_its_class(fleet):
    """ci-c through the Buildkite pipeline's own step, then its page step with the annotation."""
    root, url, password, server = fleet
    gate = buildkite_step("gate-arc-b70-1", secrets={"ORACLE_LEDGER": url},
                          env={"FLEET_MACHINE": "ci-c", "FLEET_BACKEND": "llamacpp", "FLEET_LAUNCH": "",
                               "FLEET_REFERENCE": "ref", "FLEET_GATE_ARGS": GATE_ARGS})
    code, out = _done(gate.start(cwd=_workspace(root, "ci-c", root / "ci-a" / "ref"),
                                 env=_env({"FLEET_URL": server.url})), "ci-c")
    assert code == 0, out
    agent_dir = root / "agent-bin"
    agent_dir.mkdir()
    (agent_dir / "buildkite-agent").write_text(AGENT)
    (agent_dir / "buildkite-agent").chmod(stat.S_IRWXU)
    step = buildkite_step("fleet", env={}, secrets={"ORACLE_LEDGER": url})
    board = root / "bk"
    board.mkdir()
    env = _env()
    env["PATH"] = os.pathsep.join([str(agent_dir), env["PATH"]])
    code, out = _done(step.start(cwd=board, env=env), "fleet")
    assert code == 1, out
    assert "class A: ci-a, ci-c (identical outputs on 3 prompt(s)" in out and "class B: ci-b" in out
    assert "ci-c vs ci-b" in out or "ci-a vs ci-b" in out
    calls = (agent_dir / "agent-calls").read_text().splitlines()
    assert calls == ["artifact upload fleet.html", "annotate --oracle-context oracle-fleet --style error"], calls
    annotation = (agent_dir / "annotation.md").read_text()
    assert "**1 machine x config fail in their latest run**" in annotation and "class A: ci-a, ci-c" in annotation
    assert password not in out + annotation + (board / "fleet.html").read_text()


def test_the_page_in_chromium_requests_nothing_outside_the_file(fleet, tmp_path):
    root, url, _, _ = fleet
    page = root / "fleet.html"
    if not page.exists():
        job = github_job("fleet", {}, secrets={"ORACLE_LEDGER": url}, variables={}, step="page")
        assert _done(job.start(cwd=root, env=_env({"GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")})), "p")[0] == 1
    with headless_chromium() as browser:
        browser.get(page.resolve().as_uri())
        seen = browser.execute_script(
            "return {resources: performance.getEntriesByType('resource').map(e => e.name),"
            " cells: [...document.querySelectorAll('table.grid td.cell')].map(td => td.innerText),"
            " classes: [...document.querySelectorAll('ul.classes li')].map(li => li.innerText),"
            " pair: document.querySelector('.pair pre').textContent,"
            " failing: [...document.querySelectorAll('table.grid td.fail')].map(td => td.dataset.machine)}")
        png = browser.get_screenshot_as_png()
    (tmp_path / "fleet.png").write_bytes(png)
    assert seen["resources"] == [], seen["resources"]
    assert "ci-b" in seen["failing"] and any("class B" in c for c in seen["cells"]), seen
    assert any(c.startswith("class A: ci-a") for c in seen["classes"]), seen["classes"]
    assert "flag: server_args: None -> -ctk q8_0" in seen["pair"]
    assert png_distinct_bytes(png) > 20  # drawn, not blank
