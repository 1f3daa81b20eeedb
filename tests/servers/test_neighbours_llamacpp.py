"""--neighbours and --oracle-compare logprobs on the real llama-server: a token changed only beside a neighbour of
one prompt length, and one logprob moved by one float32 ulp with the tokens unchanged (in every answer, and only at
ladder level c2)."""

from __future__ import annotations

import pytest

from browser import headless_chromium
from proxy import FaultProxy, change_token_beside, nudge_one_logprob

pytestmark = pytest.mark.slow

# The Neighbours section as Chromium lays it out: its heading's and picture's boxes, the picture's cells, the table.
SECTION = """
const box = e => e ? [e.getBoundingClientRect().width, e.getBoundingClientRect().height] : null;
const svg = document.querySelector("svg[aria-label='neighbour lengths']");
const table = document.querySelector('h2#neighbours ~ table');
return {heading: box(document.querySelector('h2#neighbours')), picture: box(svg),
        cells: svg ? [...svg.querySelectorAll('g > title')].map(t => t.textContent) : [],
        rows: table ? [...table.rows].slice(1).map(r => [...r.cells].map(c => c.innerText)) : []};
"""


@pytest.fixture(scope="module")
def two_slots(llama_tools, model_path, tmp_path_factory):
    """One llama-server with two slots (-np 2) for this module: a neighbour needs a slot beside the prompt's."""
    from oracle.backends import make_backend
    from oracle.targets.embedded import embedded_command
    from oracle.targets.launched import LaunchedServer

    server = LaunchedServer(embedded_command(llama_tools, model_path, "-np 2"), env=llama_tools.env,
                            log_dir=tmp_path_factory.mktemp("two-slots"))
    server.start(lambda url: make_backend("llamacpp", url).healthy())
    yield server
    server.stop()


def test_a_token_changed_only_beside_a_9_token_neighbour_is_caught_and_named_with_9(gate_run, two_slots,
                                                                                     read_report):
    fault = change_token_beside(prompt_length=9)
    with FaultProxy(two_slots.url, rewrite_request=fault.arrive, rewrite_chunk=fault) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", "--neighbours=1,9,9000", report="beside")
        assert result.ret == 1
        without = gate_run(f"--oracle-url={proxy.url}", report="alone")
    rep = read_report(result.folder)
    outcome = {c["id"]: (c["verdict"], c["outcome"]) for c in rep["checks"]}
    assert outcome["neighbours[1]"] == ("exact", "passed"), rep["neighbours"]["1"]
    assert outcome["neighbours[9]"] == ("divergent", "failed"), rep["neighbours"]["9"]
    # 9000 tokens do not fit the server's -c 8192: not sent, passed, said.
    assert outcome["neighbours[9000]"] == ("dropped", "passed")
    assert "exceeds the server's context of" in rep["neighbours"]["9000"]["detail"]
    nine = rep["neighbours"]["9"]
    assert set(nine["overlap"].values()) == {2} and len(nine["overlap"]) == 3, nine["overlap"]
    assert nine["counts"]["divergent"] == 3 and all(s["position"] is not None for s in nine["splits"]), nine
    first = nine["splits"][0]
    result.stdout.fnmatch_lines([f"*{first['prompt']} beside a 9-token neighbour: divergent at token "
                                 f"{first['position']} vs c1*"])
    assert len(fault.changed) == 3  # one token of each prompt, beside its 9-token neighbour only
    # The neighbours' records are never saved; the prompts' are, under their condition.
    assert sorted(p.stem for p in (result.folder / "records" / "boot1-c2-n9").glob("*.npz")) == \
        sorted(rep["neighbours"]["9"]["overlap"])
    # identity.html in real Chromium: the section and its picture (no ladder: the neighbour row alone) are shown.
    with headless_chromium() as browser:
        browser.get((result.folder / "identity.html").resolve().as_uri())
        page = browser.execute_script(SECTION)
    assert page["heading"][1] > 0 and page["picture"][0] > 0 and page["picture"][1] > 0, page
    assert [c.split(":")[0] for c in page["cells"]] == ["beside a 1-token prompt", "beside a 9-token prompt", "beside a 9000-token prompt"]
    assert page["cells"][1].startswith("beside a 9-token prompt: class B, 3/3 records split from c1"), page["cells"]
    table = {r[0]: r for r in page["rows"]}
    assert table["1 token"][1:3] == ["exact", "3/3"] and table["1 token"][5] == "A", table
    assert table["9 tokens"][1:3] == ["divergent", "0/3"] and table["9 tokens"][5].startswith("B"), table
    assert f"{first['prompt']} at token {first['position']} (divergent)" in table["9 tokens"][6], table
    assert table["9000 tokens"][1] == "dropped", table
    # Without --neighbours no 9-token request is ever sent: the same server and fault pass.
    assert without.ret == 0, without.stdout.str()[-3000:]
    assert len(fault.changed) == 3


def test_one_logprob_moved_by_one_float32_ulp_is_logprobs_moved_only_under_compare_logprobs(gate_run, shared_server,
                                                                                          shared_reference,
                                                                                          read_report):
    ref = f"--reference={shared_reference}"
    clean = gate_run(f"--oracle-url={shared_server.url}", ref, "--oracle-compare=logprobs", report="clean")
    assert clean.ret == 0, clean.stdout.str()[-3000:]  # the same server again: every logprob bit-identical
    with FaultProxy(shared_server.url, rewrite_chunk=nudge_one_logprob(position=3)) as proxy:
        moved = gate_run(f"--oracle-url={proxy.url}", ref, "--oracle-compare=logprobs", report="moved")
        tokens = gate_run(f"--oracle-url={proxy.url}", ref, "--oracle-compare=tokens", report="tokens")
        allowed = gate_run(f"--oracle-url={proxy.url}", ref, "--oracle-compare=logprobs", "--allow-logprobs-moved",
                           report="allowed")
    assert moved.ret == 1
    rep = read_report(moved.folder)
    tokens_items = [c for c in rep["checks"] if c["kind"] == "tokens"]
    assert tokens_items and {c["verdict"] for c in tokens_items} == {"logprobs-moved"}, tokens_items
    where = tokens_items[0]["evidence"]["logprobs"]
    assert where["position"] == 3 and where["moved"] == 1 and 0 < where["max_difference"] < 1e-5, where
    moved.stdout.fnmatch_lines(["*tokens identical*logprobs moved at 1 of * values; largest * nats * at token 3*"])
    assert tokens.ret == 0, tokens.stdout.str()[-3000:]
    assert {c["verdict"] for c in read_report(tokens.folder)["checks"] if c["kind"] == "tokens"} == {"exact"}
    assert allowed.ret == 0, allowed.stdout.str()[-3000:]
    md = (allowed.folder / "identity.md").read_text().splitlines()[0]
    n = len(tokens_items)
    assert f"logprobs moved in {n} items ({n} passed by --allow-logprobs-moved)" in md, md


def test_one_logprob_moved_only_at_ladder_c2_is_logprobs_moved_naming_c2_only_under_compare_logprobs(
        gate_run, two_slots, read_report):
    """The same ulp, planted only while two requests are in flight (ladder level c2 on the -np 2 server): the
    level's tokens equal c1's, its logprobs do not. Under --oracle-compare logprobs ladder[c2] is logprobs-moved
    (exit 1) and c1 exact; under --oracle-compare tokens the same fault passes."""
    fault = nudge_one_logprob(position=3, width=2)
    with FaultProxy(two_slots.url, rewrite_chunk=fault) as proxy:
        moved = gate_run(f"--oracle-url={proxy.url}", "--ladder=1,2", "--oracle-compare=logprobs", report="c2-moved",
                         max_tokens=8)
        tokens = gate_run(f"--oracle-url={proxy.url}", "--ladder=1,2", "--oracle-compare=tokens", report="c2-tokens",
                          max_tokens=8)
    assert moved.ret == 1, moved.stdout.str()[-3000:]
    rep = read_report(moved.folder)
    outcome = {c["id"]: (c["verdict"], c["outcome"]) for c in rep["checks"]}
    assert outcome["ladder[c1]"] == ("exact", "passed"), rep["ladder"]["c1"]
    assert outcome["ladder[c2]"] == ("logprobs-moved", "failed"), rep["ladder"]["c2"]
    c2 = rep["ladder"]["c2"]
    assert c2["counts"]["logprobs-moved"] == c2["records"] == 4 and c2["first_divergences"] == [], c2
    assert c2["overlap"]["reached"] == 2, c2["overlap"]
    moved.stdout.fnmatch_lines(["*ladder[[]c2[]]: logprobs-moved: c2: 0/4 exact, 4 logprobs-moved (tokens equal)*",
                                "*vs c1: logprobs moved at 1 of * values; largest * nats * at token 3*"])
    assert tokens.ret == 0, tokens.stdout.str()[-3000:]
    checks = {c["id"]: c["verdict"] for c in read_report(tokens.folder)["checks"]}
    assert checks["ladder[c1]"] == checks["ladder[c2]"] == "exact", checks
