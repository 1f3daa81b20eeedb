"""identity.html in real headless Chromium, and `oracle diff`, on reports from real llama-server runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import NO_WARMUP
from proxy import FaultProxy, change_token
from browser import headless_chromium, png_distinct_bytes

pytestmark = pytest.mark.slow

GRID = """
const head = [...document.querySelectorAll('table.grid thead th')].map(t => t.innerText.split('\\n')[0]);
const rows = [...document.querySelectorAll('table.grid tbody tr')].map(r => [r.dataset.prompt,
  [...r.querySelectorAll('td.cell')].map(c => [c.dataset.verdict, c.innerText])]);
const nav = performance.getEntriesByType('navigation')[0];
return {head, rows, resources: performance.getEntriesByType('resource').length,
        load_ms: nav.loadEventEnd - nav.startTime};
"""


def oracle_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "oracle", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def runs(gate_run, llama_server, shared_reference):
    """A reference, a clean gate and a planted-fault gate (code-hashmap changed at token 7), with a ladder."""
    server = llama_server("-np 2")
    clean = gate_run(f"--oracle-url={server.url}", f"--reference={shared_reference}", "--ladder=1,2", report="clean")
    clean.assert_outcomes(passed=7)
    with FaultProxy(server.url, rewrite_chunk=change_token(request_index=2, position=7)) as proxy:
        fault = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", f"--reference={shared_reference}", "--ladder=1,2", report="fault")
    assert fault.ret == 1
    return shared_reference, clean.folder, fault.folder


def test_html_report_in_headless_chromium(runs, tmp_path):
    _, clean, fault = runs
    page = fault / "identity.html"
    text = page.read_text()
    assert "<script" not in text and not re.search(r"""(src|href)\s*=\s*['"]?(https?:|//)""", text)
    with headless_chromium() as browser:
        browser.get(page.resolve().as_uri())
        grid = browser.execute_script(GRID)
        png = browser.get_screenshot_as_png()
    (tmp_path / "fault.png").write_bytes(png)
    assert grid["head"] == ["prompt", "vs reference", "c1", "c2"]
    assert [r[0] for r in grid["rows"]] == ["code-palindrome", "code-hashmap", "math-derivative"]
    cells = dict(grid["rows"])
    assert cells["code-hashmap"][0] == ["divergent", "divergent @7"]
    assert all(v == "exact" for v, _ in cells["code-palindrome"])
    assert grid["resources"] == 0
    assert png_distinct_bytes(png) > 20, "the screenshot is blank"
    assert "first divergence at token 7" in page.read_text()


def test_oracle_diff_identical_fault_and_identity(runs, tmp_path):
    ref, clean, fault = runs
    same = oracle_cli("diff", str(clean), str(ref))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "outputs: 3/3 identical" in same.stdout
    differs = oracle_cli("diff", str(clean), str(fault), "--json")
    assert differs.returncode == 1
    data = json.loads(differs.stdout)
    assert [(p["prompt"], p["first_divergence"]) for p in data["prompts"] if p["status"] != "identical"] == \
        [("code-hashmap", 7)]
    assert {"id": "tokens[code-hashmap]", "a": "exact", "b": "divergent"} in data["verdict_changes"]
    # Another model and environment: the identity fields that differ are named.
    other = json.loads((clean / "identity.json").read_text())
    other["identity"]["model"]["sha256"] = "0" * 64
    other["identity"]["server"]["build"] = "b9999-cuda"
    other["identity"]["environment"]["GGML_CUDA_GRAPHS"] = "1"
    other.pop("seal")  # edited, so without its seal: read as a report written before seals (unverified), not refused
    moved = tmp_path / "other"
    moved.mkdir()
    (moved / "identity.json").write_text(json.dumps(other))
    (moved / "records").symlink_to(clean / "records")
    out = oracle_cli("diff", str(clean), str(moved))
    assert out.returncode == 0, out.stdout  # same outputs: identity changes listed, exit 0
    for field in ("model.sha256", "server.build", "environment.GGML_CUDA_GRAPHS"):
        assert f"  {field}: " in out.stdout
    bad = oracle_cli("diff", str(clean), str(tmp_path / "nothing"))
    assert bad.returncode == 2 and "neither a report dir" in bad.stderr
