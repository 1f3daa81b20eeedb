"""The fleet recipes (examples/fleet/) against their engines' published schemas, offline (check-jsonschema's
vendored GitHub workflow and Buildkite schemas, the `test` extra), a planted typo refused by each, and what the
recipes promise: one machine's failure cancels no other, the ledger URL only from a secret, every report folder
kept as an artifact, a last job that writes the page after every machine, passed or failed.
The commands themselves run for real in tests/servers/test_fleet_llamacpp.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fleet_recipes import BUILDKITE, GITHUB, load

SCHEMAS = {GITHUB: "vendor.github-workflows", BUILDKITE: "vendor.buildkite"}
INSTALL = "pip install check-jsonschema (the test extra: pip install -e '.[test]')"


def _check(path: Path, schema: str) -> subprocess.CompletedProcess:
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        raise AssertionError(f"check-jsonschema is not installed; {INSTALL}") from None
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("recipe", [GITHUB, BUILDKITE], ids=["github-actions", "buildkite"])
def test_the_recipe_passes_its_published_schema(recipe):
    done = _check(recipe, SCHEMAS[recipe])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok -- validation done" in done.stdout


@pytest.mark.parametrize("recipe, typo", [(GITHUB, ("runs-on: [self-hosted", "runs_on: [self-hosted")),
                                          (BUILDKITE, ("artifact_paths:", "artifacts_path:"))],
                         ids=["github-actions", "buildkite"])
def test_a_typo_in_the_recipe_is_refused_by_its_schema(recipe, typo, tmp_path):
    """The check can fail: the same recipe with one key misspelt."""
    text = recipe.read_text()
    assert typo[0] in text
    planted = tmp_path / recipe.name
    planted.write_text(text.replace(typo[0], typo[1], 1))
    done = _check(planted, SCHEMAS[recipe])
    assert done.returncode == 1 and "Schema validation errors were encountered" in done.stdout, done.stdout


def test_the_workflow_gates_every_runner_label_and_writes_the_page_after_all():
    workflow = load(GITHUB)
    gate, fleet = workflow["jobs"]["gate"], workflow["jobs"]["fleet"]
    assert gate["strategy"]["fail-fast"] is False
    machines = [e["machine"] for e in gate["strategy"]["matrix"]["include"]]
    assert len(machines) == len(set(machines)) >= 2
    assert gate["runs-on"] == ["self-hosted", "${{ matrix.machine }}"]  # the runner's label is the machine
    assert gate["env"]["FLEET_MACHINE"] == "${{ matrix.machine }}"
    for job in (gate, fleet):
        assert job["env"]["FLEET_LEDGER"] == "${{ secrets.ORACLE_LEDGER }}"
    run = next(s["run"] for s in gate["steps"] if s.get("id") == "gate")
    for flag in ('--oracle-machine="$FLEET_MACHINE"', '--ledger="$FLEET_LEDGER"',
                 '--report-dir="reports/$FLEET_MACHINE"', '--reference="$FLEET_REFERENCE"'):
        assert flag in run
    upload = next(s for s in gate["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "${{ always() }}" and upload["with"]["path"] == "reports/${{ matrix.machine }}/"
    assert fleet["needs"] == "gate" and fleet["if"] == "${{ always() }}"
    page = next(s["run"] for s in fleet["steps"] if s.get("id") == "page")
    assert page.startswith('oracle fleet --ledger="$FLEET_LEDGER" --out=fleet.html')
    assert any(s.get("uses", "").startswith("actions/upload-artifact@") and s["with"]["path"] == "fleet.html"
               for s in fleet["steps"])


def test_the_pipeline_has_one_step_per_queue_and_annotates_the_page():
    pipeline = load(BUILDKITE)
    gates = [s for s in pipeline["steps"] if isinstance(s, dict) and str(s.get("key", "")).startswith("gate-")]
    queues = [s["agents"]["queue"] for s in gates]
    assert len(queues) == len(set(queues)) >= 2
    for step, queue in zip(gates, queues):
        assert step["env"]["FLEET_MACHINE"] == queue and step["secrets"] == {"FLEET_LEDGER": "ORACLE_LEDGER"}
        assert step["artifact_paths"] == f"reports/{queue}/**/*"
    wait = next(s for s in pipeline["steps"] if isinstance(s, dict) and "wait" in s)
    assert wait["continue_on_failure"] is True
    last = pipeline["steps"][-1]
    assert last["key"] == "fleet" and "oracle fleet" in last["command"]
    assert "buildkite-agent annotate" in last["command"] and 'exit "$$status"' in last["command"]


@pytest.mark.parametrize("recipe", [GITHUB, BUILDKITE], ids=["github-actions", "buildkite"])
def test_no_ledger_url_or_password_is_written_in_a_recipe(recipe):
    text = recipe.read_text()
    assert "postgresql://" not in text.replace("postgresql://user:password@host/db", "")
