"""`--localize` on a real gate run of a python runner (tests/helpers/toy_runner.py's LayeredToy through the runner
protocol, the embedded SmolLM2 GGUF rendering the prompts): a candidate with layer 2 perturbed fails its gate and is
localized to layer 2 in <report-dir>-localize/, the report itself untouched; the same runner passes and nothing is
localized; the run plan states the cost. 1 prompt x 8 tokens, one reference for the module."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, write_suite

pytestmark = pytest.mark.slow
TOY = f"python:{REPO / 'tests' / 'helpers' / 'toy_runner.py'}:layered"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path]:
    """(the suite, the unperturbed runner's reference), recorded once in a process of its own."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("localize")
    rows = [json.loads(line) for line in (REPO / "prompts" / "default.jsonl").read_text().splitlines()[:1]]
    suite = write_suite(folder, "first1", rows)
    ref = folder / "ref"
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--backend={TOY}",
                        f"--oracle-suite={suite}", f"--record={ref}", f"--report-dir={folder / 'rec'}", "--canaries=none",
                        "--prefill-lengths=64",
                        "--max-tokens=8"], cwd=folder, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    return suite, ref


def _gate(pytester, recorded, report: str, *extra: str):
    suite, ref = recorded
    folder = pytester.path / report
    result = pytester.runpytest("-p", "no:cacheprovider", f"--backend={TOY}", f"--oracle-suite={suite}",
                                f"--reference={ref}", f"--report-dir={folder}", "--canaries=none", "--max-tokens=8",
                                "--localize", "--prefill-lengths=64", *extra)
    result.folder = folder
    return result


def test_a_failed_gate_is_localized_to_the_perturbed_layer_beside_its_report(pytester, recorded):
    result = _gate(pytester, recorded, "bad", "--runner-arg=perturb=2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["oracle localize: first layer out of band: layers.2 *",
                                 f"report: {pytester.path / 'bad-localize' / 'localize.md'} *"])
    data = json.loads((pytester.path / "bad-localize" / "localize.json").read_text())
    assert data["localize"]["first_layer_out_of_band"] == "layers.2"
    assert data["candidate"]["runner_args"] == {"perturb": "2"} and data["reference"]["runner_args"] == {}
    assert not list(result.folder.glob("localize*"))  # the gate's own report folder holds no localize file
    # identity.json's own `localize` key (written before the seal), its table in identity.md, its curve in the page
    report = json.loads((result.folder / "identity.json").read_text())
    loc = report["localize"]
    assert loc["status"] == "localized" and loc["first_layer_out_of_band"] == "layers.2"
    assert loc["folder"] == str(pytester.path / "bad-localize") and loc["answer"] == data["answer"]
    assert [r["name"] for r in loc["rows"]] == [r["name"] for r in data["localize"]["rows"]]  # every row a layer
    md = (result.folder / "identity.md").read_text()
    assert "## Localize (`--localize`)" in md and "| layers.2 | " in md and "**first**" in md
    from oracle.cli import main

    assert main(["html", str(result.folder)]) == 0  # the page as `oracle html` writes it, the seal audited first
    page = (result.folder / "identity.html").read_text()
    assert "<section id=localize>" in page and "<svg" in page and "first out of band: layers.2" in page


def test_a_gate_that_passes_localizes_nothing_and_the_plan_states_the_cost(pytester, recorded):
    result = _gate(pytester, recorded, "good")
    assert result.ret == pytest.ExitCode.OK
    assert not (pytester.path / "good-localize").exists()
    assert "localize" not in json.loads((result.folder / "identity.json").read_text())  # no key without a split
    assert "oracle localize" not in result.stdout.str()
    plan = json.loads((result.folder / "identity.json").read_text())["identity"]["plan"]
    assert any(n.startswith("--localize: no request; on a split") for n in plan["notes"])
