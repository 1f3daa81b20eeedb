"""The width map on the real llama-server (-np 4): a fault that changes one token only when exactly 3 requests are
in flight (a kernel bucket edge, not a power of two) is caught by `--ladder every:4` and `--ladder edges:3`, whose
width map names width 3; under `--ladder 1,2,4` it passes, and the report says width 3 was never tried."""

from __future__ import annotations

import pytest

from proxy import FaultProxy, change_token_at_width

pytestmark = pytest.mark.slow

WIDTH = 3
POSITION = 4
TOKENS = 8


@pytest.fixture(scope="module")
def width_fault(llama_tools, model_path, tmp_path_factory):
    """One llama-server with 4 slots for the module, behind a proxy that plants the fault at width 3."""
    from oracle.backends import make_backend
    from oracle.targets.embedded import embedded_command
    from oracle.targets.launched import LaunchedServer

    server = LaunchedServer(embedded_command(llama_tools, model_path, "-np 4"), env=llama_tools.env,
                            log_dir=tmp_path_factory.mktemp("width-server"))
    server.start(lambda url: make_backend("llamacpp", url).healthy())
    try:
        with FaultProxy(server.url, rewrite_chunk=change_token_at_width(width=WIDTH, position=POSITION)) as proxy:
            yield proxy
    finally:
        server.stop()


def _outcomes(rep: dict) -> dict[str, tuple[str, str]]:
    return {c["id"]: (c["verdict"], c["outcome"]) for c in rep["checks"] if c["kind"] == "ladder"}


@pytest.mark.parametrize("ladder", ["every:4", "edges:3"])
def test_a_fault_at_width_3_is_caught_by_a_preset_and_the_width_map_names_it(gate_run, width_fault, read_report,
                                                                             ladder):
    result = gate_run(f"--oracle-url={width_fault.url}", f"--ladder={ladder}", report=ladder.replace(":", "-"),
                      max_tokens=TOKENS)
    assert result.ret == 1
    rep = read_report(result.folder)
    widths = rep["width_map"]["widths"]
    expected = {"ladder[c1]": ("exact", "passed"), "ladder[c2]": ("exact", "passed"),
                "ladder[c3]": ("divergent", "failed"), "ladder[c4]": ("exact", "passed")}
    assert _outcomes(rep) == {k: v for k, v in expected.items() if int(k[8:-1]) <= len(widths)}
    assert rep["ladder"]["c3"]["first_divergences"] == [POSITION] * 3
    wm = rep["width_map"]
    assert wm["ladder"] == ladder and wm["first_parting"] == WIDTH and wm["never_tried"] == []
    assert [(w["width"], w["class"], w["proven"]) for w in widths] == [(1, "A", True), (2, "A", True),
                                                                       (3, "B", True), (4, "A", True)][:len(widths)]
    assert len(widths) == (4 if ladder == "every:4" else 3)
    assert wm["classes"][1]["widths"] == [3] and set(wm["classes"][1]["prompts"].values()) == {POSITION}
    # Beside the flip count: the split's margin sorts it (a token the proxy moved by one id is far from a tie).
    c3 = rep["ladder"]["c3"]["splits"]
    assert c3["flips"] == 3 and c3["tie_flips"] + c3["confident_flips"] + c3["unmeasured_flips"] == 3
    assert c3["positions"] == 3 * TOKENS
    result.stdout.fnmatch_lines([f"oracle: width map ({ladder}): c1 A · c2 A · c3 B*; first width that parts "
                                 "from c1: 3",
                                 "oracle: class B (width 3): *@4*"])
    md = (result.folder / "identity.md").read_text()
    assert f"## Width map (`--ladder {ladder}`)" in md and "- first width that parts from c1: 3" in md
    assert "| c3 | B" in md
    page = (result.folder / "identity.html").read_text()
    assert "aria-label='width map'" in page and "http" not in page.split("aria-label='width map'")[1][:4000]


def test_the_same_fault_passes_a_powers_of_two_ladder_and_the_report_names_width_3_never_tried(
        gate_run, width_fault, read_report):
    result = gate_run(f"--oracle-url={width_fault.url}", "--ladder=1,2,4", report="pow2", max_tokens=TOKENS)
    assert result.ret == 0
    rep = read_report(result.folder)
    assert set(_outcomes(rep).values()) == {("exact", "passed")}
    wm = rep["width_map"]
    assert wm["never_tried"] == [3] and wm["first_parting"] is None
    result.stdout.fnmatch_lines(["oracle: width map (1,2,4): c1 A · c2 A · c4 A; every width tried gives the c1 "
                                 "run's outputs", "oracle: widths never tried: 3"])
    assert "- widths never tried: 3" in (result.folder / "identity.md").read_text()
