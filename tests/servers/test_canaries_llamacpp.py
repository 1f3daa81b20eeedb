"""Canaries on a real llama-server with the real SmolLM2-135M: report, record/gate, regressions, negative controls.

Small settings keep the canaries' CI share small; the full sweep (`pytest --backend=llamacpp`) is the main job.
"""

from __future__ import annotations

import json

import datasets  # noqa: F401  (imported here, outside pytester's in-process runs: pyarrow cannot load twice)
import pytest

from conftest import NO_WARMUP, write_suite
from proxy import FaultProxy, change_token

pytestmark = pytest.mark.slow

# Gate items for one prompt, the freshness check, two easy and one hard code item, needles and repeats.
SMALL = ["--canaries=code,needle,repeats", "--server-args=-np 3", "--needle-lengths=512,9000", "--needle-depths=0,100", "--repeats=3",
         "-k", "palindrome or cache or fresh or mul-7-2 or add-3-5 or recursion or needle or repeats"]


def canaries(folder) -> dict:
    return json.loads((folder / "identity.json").read_text())["canaries"]


def test_canaries_reported_then_recorded_and_gated_without_regression(gate_run):
    rec = gate_run("--record=ref", *SMALL, report="rec")
    # 24 items collected: record[x3], cache-zero, speculation, code-fresh, code[x14], needle[512-d0, 512-d100]
    # (9000 does not fit), repeats[x2]; -k keeps 10 and deselects record[x2], speculation and 11 code items.
    rec.assert_outcomes(passed=2 + 4 + 2 + 2, deselected=3 + 11)
    rows = canaries(rec.folder)
    assert set(rows) == {"code-fresh", "code[mul-7-2]", "code[add-3-5]", "code[recursion]", "needle[512-d0]",
                         "needle[512-d100]", "repeats[sequential]", "repeats[burst]"}
    easy = rows["code[mul-7-2]"]
    assert (easy["expected"], easy["extracted"], easy["verdict"]) == ("14", "14", "pass") and easy["raw_text"]
    assert rows["needle[512-d0]"]["prompt_tokens"] == 512
    assert rows["repeats[burst]"]["repeats"]["n"] == 3
    md = (rec.folder / "identity.md").read_text()
    assert "- canaries: code " in md and "repeats " in md and "burst " in md
    assert "needle lengths not collected: 9000 tokens" in md
    manifest = json.loads((rec.folder.parent / "ref" / "manifest.json").read_text())
    assert set(manifest["canaries"]) == set(rows)
    gate = gate_run("--reference=ref", *SMALL, report="gate")
    assert gate.ret == 0
    after = canaries(gate.folder)
    assert all(r["verdict"] != "fail" for r in after.values())
    assert {k: r["ok"] for k, r in after.items()} == {k: r["ok"] for k, r in rows.items()}


def test_wrong_stored_answer_fails_freshness_and_the_item(gate_run, tmp_path):
    from oracle.canary.code import CODE_SET

    data = json.loads(CODE_SET.read_text())
    data["items"] = [dict(i, expected="30") if i["id"] == "mul-7-2" else i for i in data["items"]]
    bad = tmp_path / "bad_set.json"
    bad.write_text(json.dumps(data))
    result = gate_run(f"--code-set={bad}", "--canary-strict", "--canaries=code", "-k",
                      "palindrome or cache or fresh or mul-7-2", report="bad")
    assert result.ret == 1
    # 20 collected (record[x3], cache-zero, speculation, code-fresh, code[x14]); -k keeps 4.
    result.assert_outcomes(passed=2, failed=2, deselected=3 + 13)
    result.stdout.fnmatch_lines(["*code-fresh: fail: 1 stale item(s)*", "*mul-7-2: stored answer '30' but the "
                                 "program prints '14'*"])
    assert canaries(result.folder)["code[mul-7-2]"]["extracted"] == "14"


def test_burst_through_a_proxy_that_changes_one_request_fails(gate_run, llama_server, tmp_path):
    suite = write_suite(tmp_path, "one", [{"id": "chat-one", "class": "chat", "max_tokens": 8,
                                           "messages": [{"role": "user", "content": "Say hi."}]}])
    server = llama_server("-np 3")
    # Requests: 1 suite prompt, 3 sequential repeats, then the burst: the 6th is in the burst.
    with FaultProxy(server.url, rewrite_chunk=change_token(request_index=6, position=3)) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", "--canaries=repeats", "--repeats=3", "--canary-strict",
                          suite=suite, report="burst", max_tokens=16)
    assert result.ret == 1
    result.assert_outcomes(passed=4, failed=1)
    rows = canaries(result.folder)
    burst = rows["repeats[burst]"]["repeats"]
    assert rows["repeats[sequential]"]["ok"] and burst["unique"] == 2 and burst["identical"] == 2
    assert [o["first_divergence"] for o in burst["outliers"]] == [3]
    result.stdout.fnmatch_lines(["*repeats[[]burst[]]: fail: 2/3 identical, 2 unique outputs; request * first "
                                 "divergence at token 3*"])


def test_requantized_candidate_regresses_a_canary(gate_run, q4_0_model):
    args = ["--canaries=code", "-k", "palindrome or cache or code"]
    assert gate_run("--record=ref", *args, report="rec").ret == 0
    result = gate_run("--reference=ref", f"--oracle-model={q4_0_model}", *args, report="q4_0")
    rows = canaries(result.folder)
    flipped = [k for k, r in rows.items() if r.get("why", "").startswith("regression")]
    assert result.ret == 1 and flipped, {k: (r.get("extracted"), r.get("verdict")) for k, r in rows.items()}
    escaped = "".join({"[": "[[]", "]": "[]]"}.get(ch, ch) for ch in flipped[0])  # fnmatch brackets
    result.stdout.fnmatch_lines([f"*{escaped}: fail: *regression: the reference answered it right*"])


def test_needle_absent_from_the_haystack_is_not_found_by_the_real_model(shared_server, model_path):
    """Negative control on the served model: the same prompt with and without its needle."""
    import asyncio

    from oracle.backends import CompletionRequest, make_backend
    from oracle.backends.gguf import gguf_metadata, tokenizer_from_gguf
    from oracle.canary.needle import build_needle_prompt, load_haystack, score_needle

    server = shared_server
    backend = make_backend("llamacpp", server.url)
    tok = tokenizer_from_gguf(model_path)
    template = gguf_metadata(model_path).get("tokenizer.chat_template")
    verdicts = {}
    for with_needle in (True, False):
        p = build_needle_prompt(total=512, depth=0, tokenize=lambda t: tok.encode(t, add_special_tokens=False).ids,
                                template=template, special_tokens={}, haystack=load_haystack(), seed=1,
                                with_needle=with_needle)

        async def ask():
            async with backend.async_client() as client:
                return await backend.complete(client, CompletionRequest(prompt_ids=p.ids, max_tokens=16, logprobs=1))

        verdicts[with_needle] = score_needle(asyncio.run(ask()).text, p.value).verdict
    assert verdicts == {True: "correct", False: "wrong"}
