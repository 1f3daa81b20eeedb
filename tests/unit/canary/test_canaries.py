"""Canaries, fast layer: extraction rule, sandbox, freshness, token-exact haystacks, repeats, verdicts."""

from __future__ import annotations

import json

import pytest

from oracle.canary.code import (CODE_SET, build_set, extract_answer, load_set, main, run_sandboxed, score_answer,
                                  stale_items, SandboxError)
from oracle.canary.report import markdown_lines
from oracle.canary.results import canary_summary, canary_verdict, family_counts
from oracle.canary.needle import (ANSWER_TOKENS, build_needle_prompt, default_lengths, load_haystack,
                           score_needle, split_lengths)
from oracle.canary.repeats import summarize_repeats
from oracle.compare.tokens import first_divergence
from oracle.backends.gguf import gguf_context_length
from oracle.compare.verdicts import FAIL, INFO, PASS


# -- code result -----------------------------------------------------------------------------
def test_extraction_rule_is_the_first_integer_and_blames_itself_when_it_misses():
    assert extract_answer(" 14\n\nThis is because 7 * 2") == "14"
    assert extract_answer(" -397") == "-397"
    assert extract_answer(" the maximum value") is None
    assert score_answer(" 14.", "14").verdict == "correct"
    wrong = score_answer(" 10", "14")
    assert (wrong.verdict, wrong.extracted) == ("wrong", "10")
    none = score_answer(" the sum of the list", "14")
    assert none.verdict == "extraction" and "extraction rule found nothing" in none.reason
    later = score_answer(" 7 times 2 is 14", "14")
    assert later.verdict == "extraction" and "contains 14" in later.reason


def test_shipped_set_is_graded_fresh_and_holds_the_easy_item():
    items = load_set()
    assert len(items) >= 12 and {i.level for i in items} == {1, 2, 3, 4}
    assert next(i for i in items if i.id == "mul-7-2").expected == "14"
    assert stale_items(items) == []


def test_sandbox_empty_env_temp_cwd_no_network_timeout():
    # Empty environment; Python itself may add LC_CTYPE (PEP 538 locale coercion).
    assert run_sandboxed("import os\nprint(sorted(set(os.environ) - {'LC_CTYPE'}))") == "[]"
    assert run_sandboxed("import os, tempfile\nprint(os.getcwd().startswith(tempfile.gettempdir()))") == "True"
    out = run_sandboxed("import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=1)\n"
                        "    print('net')\nexcept OSError:\n    print('no-net')")
    assert out == "no-net"
    with pytest.raises(SandboxError, match="timed out"):
        run_sandboxed("while True:\n    pass", timeout=1)
    with pytest.raises(SandboxError, match="exit 1"):
        run_sandboxed("raise SystemExit(1)")


def test_stale_stored_answer_fails_the_freshness_check_naming_the_item(tmp_path, capsys):
    path = tmp_path / "set.json"
    build_set(path, [("ok", 1, "print(1 + 1)"), ("tampered", 1, "print(7 * 2)")])
    data = json.loads(path.read_text())
    data["items"][1]["expected"] = "30"  # the field's bad quantization said 30 where the program prints 14
    path.write_text(json.dumps(data))
    stale = stale_items(load_set(path))
    assert len(stale) == 1 and stale[0].startswith("tampered: stored answer '30' but the program prints '14'")
    assert main(["check", str(path)]) == 1
    assert "STALE tampered" in capsys.readouterr().out
    data["items"][0]["program"] = "print(1 + 2)"  # edited without a rebuild
    path.write_text(json.dumps(data))
    assert stale_items(load_set(path))[0].startswith("ok: the program changed")


def test_a_wrong_stored_answer_makes_a_right_model_answer_fail():
    assert score_answer(" 14", "30").verdict == "wrong"


# -- needle ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_tokenizer(model_path):
    """SmolLM2's own vocabulary and chat template, read from the GGUF file the run uses."""
    from oracle.backends.gguf import gguf_metadata, tokenizer_from_gguf

    tok = tokenizer_from_gguf(model_path)
    meta = gguf_metadata(model_path)
    return (lambda text: tok.encode(text, add_special_tokens=False).ids), tok, meta.get("tokenizer.chat_template")


@pytest.mark.parametrize("total", [300, 512, 1000, 2048, 8176])
def test_haystack_lengths_are_token_exact(real_tokenizer, total):
    tokenize, tok, template = real_tokenizer
    hay = load_haystack()
    for depth in (0, 50, 100):
        p = build_needle_prompt(total=total, depth=depth, tokenize=tokenize, template=template,
                                special_tokens={}, haystack=hay, seed=1)
        assert len(p.ids) == total
        text = tok.decode(list(p.ids), skip_special_tokens=False)
        assert text.startswith("<|im_start|>") and text.endswith(f"for {p.key} mentioned in the text is")
        assert f"magic numbers for {p.key} is: {p.value}." in text
        if depth == 0:
            assert text.index(p.value) < text.index("Lowmarsh")
        if depth == 100:
            assert text.rindex("Lowmarsh") < text.index(p.value)


def test_needle_absent_cannot_be_found(real_tokenizer):
    tokenize, tok, template = real_tokenizer
    p = build_needle_prompt(total=512, depth=50, tokenize=tokenize, template=template, special_tokens={},
                            haystack=load_haystack(), with_needle=False)
    assert len(p.ids) == 512 and p.value not in tok.decode(list(p.ids)) and p.needle_at == -1
    assert score_needle(" 1234567.", p.value).verdict == "wrong"
    assert score_needle(f" {p.value}.", p.value).verdict == "correct"
    assert score_needle(" the number", p.value).extracted is None


def test_own_haystack_file_and_lengths_that_do_not_fit(tmp_path, model_path):
    own = tmp_path / "hay.txt"
    own.write_text("# my notes\nOne sentence here. Another one there!\n\nA third.\n")
    assert load_haystack(own) == ["One sentence here. ", "Another one there! ", "A third. "]
    assert gguf_context_length(model_path) == 8192
    assert default_lengths(8192) == [1024, 2048, 4096, 8192 - ANSWER_TOKENS]
    assert split_lengths([512, 8176, 8192, 16384], 8192) == ([512, 8176], [8192, 16384])


# -- repeats -----------------------------------------------------------------------------------
def test_repeats_unique_count_and_first_divergence_of_each_outlier():
    s = summarize_repeats([[1, 2, 3], [1, 2, 3], [1, 9, 3], [1, 2]])
    assert (s.n, s.unique, s.identical, s.baseline_index) == (4, 3, 2, 0)
    assert [(o.index, o.first_divergence, o.baseline_token, o.outlier_token) for o in s.outliers] == \
        [(2, 1, 2, 9), (3, 2, 3, None)]
    assert "2/4 identical, 3 unique outputs" in s.describe()
    assert summarize_repeats([[5]] * 5).describe() == "5/5 identical"
    assert first_divergence([1, 2], [1, 2]) is None
    assert summarize_repeats([[1], [1]], ["stop", "length"]).unique == 2
    assert s.as_dict()["confidence"] == {"identical": {"k": 2, "n": 4, "wilson95": [0.15, 0.85]}}


# -- verdicts and report -----------------------------------------------------------------------
def test_canary_verdict_table():
    ref = {"code[a]": {"ok": True}, "code[b]": {"ok": False}}
    assert canary_verdict(ok=True, item_id="code[a]", reference=ref, strict=False)[0] == PASS
    assert canary_verdict(ok=False, item_id="code[a]", reference=ref, strict=False) == \
        (FAIL, "regression: the reference answered it right")
    assert canary_verdict(ok=False, item_id="code[b]", reference=ref, strict=False)[0] == INFO
    assert canary_verdict(ok=False, item_id="code[c]", reference=ref, strict=False)[0] == INFO
    assert canary_verdict(ok=False, item_id="code[a]", reference=None, strict=False)[0] == INFO
    assert canary_verdict(ok=False, item_id="code[a]", reference=None, strict=True)[0] == FAIL


def test_summary_line():
    rows = {f"code[{i}]": {"family": "code", "ok": i < 9} for i in range(12)}
    rows |= {f"needle[{i}]": {"family": "needle", "ok": i < 18} for i in range(20)}
    rows["repeats[sequential]"] = {"family": "repeats", "ok": True, "repeats": {"n": 5, "identical": 5}}
    rows["repeats[burst]"] = {"family": "burst", "ok": True, "repeats": {"n": 5, "identical": 5}}
    assert canary_summary(rows) == "code 9/12, needle 18/20, repeats 5/5 identical, burst 5/5 identical"
    assert family_counts(rows) == {"code": (9, 12), "needle": (18, 20), "repeats": (5, 5), "burst": (5, 5)}
    assert canary_summary({}) is None and family_counts({}) == {}
    assert family_counts({"repeats[sequential]": {"family": "repeats", "ok": False, "verdict": "not-run"}}) == {}
    assert markdown_lines({"code[x]": {"family": "code", "ok": False, "verdict": "info", "expected": "14",
                                       "extracted": "10", "reason": "answered 10"}})[1] == \
        "  - code[x]: info: expected '14', got '10' (answered 10)"


def test_shipped_set_is_the_packaged_one():
    assert CODE_SET.name == "code_result.json" and CODE_SET.parent.name == "canaries"


def test_lengths_beyond_the_context_are_not_collected_and_reported(pytester):
    """Collection uses the model file and the server flags, not a server (no server starts for --co)."""
    report = pytester.path / "rep"
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--co", "-q", f"--report-dir={report}",
                                "--canaries=needle", "--server-args=-np 4", "--needle-lengths=512,2K,4K",
                                "--needle-depths=0,100")
    result.stdout.fnmatch_lines(["*test_needle.py::test_needle[[]512-d0[]]", "*test_needle.py::test_needle[[]512-d100[]]"])
    assert "2048-d" not in result.stdout.str() and "test_code" not in result.stdout.str()
    notes = json.loads((report / "identity.json").read_text())["notes"]
    assert any("needle lengths not collected: 2048, 4096 tokens" in n and "context 2048" in n and "-np 4" in n
               for n in notes), notes


def test_canary_option_errors_name_the_fix(pytester):
    result = pytester.runpytest("--backend=llamacpp", "--co", "--needle-depths=0,150")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--needle-depths '0,150': 150 is out of range (0..100)*"])
    result = pytester.runpytest("--backend=llamacpp", "--co", "--canaries=code,poem")
    result.stderr.fnmatch_lines(["*--canaries 'code,poem': unknown canary 'poem'*"])
