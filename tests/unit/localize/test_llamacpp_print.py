"""What oracle localize reads from llama.cpp's llama-eval-callback printout (the format of its common/debug.cpp,
copied from a real run of the embedded SmolLM2), the launch flags it hands the tool, the tokenization check's
words, and the refusals of the HTTP families and of a llamacpp run oracle did not launch. The tool's real runs
are tests/servers/test_localize_llamacpp.py."""

from __future__ import annotations

import pytest
from planted_localize import planted_localize

from oracle.cli import main
from oracle.localize.llamacpp_layers import align_printed, parse_printed, printed_ids, tokenization_note, tool_args

PRINTED = """\
common_debug_cb_eval:                     embd = (f32)   GET_ROWS(token_embd.weight{576, 49152, 1, 1}, inp_tokens{2, 1, 1, 1}}) = {576, 2, 1, 1}
    [
        [
            [      0.1096,       0.0174,      -0.0947,    ...,       0.0506,       0.1287,       0.0708  ],
            [     -0.0131,      -0.1444,       0.0450,    ...,       0.0849,      -0.0425,       0.2451  ],
        ],
    ]
    sum = -7.908967
common_debug_cb_eval:                   Qcur-0 = (f32)    MUL_MAT(blk.0.attn_q.weight{576, 576, 1, 1}, attn_norm-0{576, 2, 1, 1}}) = {576, 2, 1, 1}
    [
        [
            [      1.0000,       2.0000,       3.0000,    ...,       4.0000,       5.0000,       6.0000  ],
        ],
    ]
    sum = 21.000000
common_debug_cb_eval:                   Qcur-0 = (f32)       ROPE(Qcur-0{64, 9, 2, 1}, inp_pos{2, 1, 1, 1}}) = {64, 9, 2, 1}
    [
        [
            [      1.0000,       2.0000,       3.0000,    ...,       4.0000,       5.0000,       6.0000  ],
        ],
    ]
    sum = 21.000000
common_debug_cb_eval:               cache_k_l0 = (q8_0)       VIEW(cache_k_l0{576, 256, 1, 1}, }) = {576, 2, 1, 1}
common_debug_cb_eval:                  l_out-0 = (f32)        ADD(ffn_out-0{576, 2, 1, 1}, ffn_inp-0{576, 2, 1, 1}}) = {576, 2, 1, 1}
    [
        [
            [      -nan,          inf,       0.5000,    ...,       0.0506,       0.1287,       0.0708  ],
        ],
    ]
    sum = nan

llama_perf_context_print:        load time =     120.63 ms
"""


def test_the_printout_is_read_by_name_with_its_values_and_sums():
    printed = parse_printed(PRINTED)
    assert list(printed) == ["embd", "Qcur-0", "l_out-0"]  # the quantized cache prints no values: no row
    assert printed["embd"].numbers[:3] == (0.1096, 0.0174, -0.0947) and printed["embd"].numbers[-1] == -7.908967
    assert len(printed["embd"].numbers) == 13 and printed["Qcur-0"].count == 2
    assert printed["l_out-0"].op == "ADD" and printed["l_out-0"].shape == "576, 2, 1, 1"
    (a, b), notes = align_printed(printed, parse_printed(PRINTED))
    assert a.names() == ["embd", "l_out-0"]  # Qcur-0 printed twice: left out, and said so
    assert [(r.layer, r.whole) for r in a.rows] == [(-1, False), (0, True)]
    assert "2 tensors matched by name; 1 printed more than once" in notes[0] and "Qcur-0" in notes[0]


def test_a_tensor_with_another_shape_in_one_run_is_not_matched():
    other = parse_printed(PRINTED.replace("{576, 2, 1, 1}\n    [\n        [\n            [      0.1096",
                                          "{576, 3, 1, 1}\n    [\n        [\n            [      0.1096"))
    (a, _), _ = align_printed(parse_printed(PRINTED), other)
    assert a.names() == ["l_out-0"]


def test_the_ids_the_tool_printed_and_the_tokenization_check():
    log = "0.00.554.034 I number of input tokens = 3\n0.00.554.034 I   504\n0.00.554.034 I   3575\n0.0 I   282\nx"
    assert printed_ids(log) == [504, 3575, 282]
    assert tokenization_note([504, 3575, 282], [504, 3575, 282]) == \
        "the path's text tokenizes back to the same 3 ids in llama-eval-callback"
    assert tokenization_note([504, 3575, 282], [504, 9, 282]).startswith(
        "NOT the same ids: the path's text tokenizes to 3 ids in llama-eval-callback, the path has 3; first "
        "difference at position 1")


def test_the_tool_gets_the_launch_flags_without_llama_servers_own():
    assert tool_args("-ctk q8_0 -np 2 --metrics --port=9 -t 2", tokens=9) == \
        ["-ctk", "q8_0", "-t", "2", "-c", "512", "--no-repack"]
    assert tool_args("-c 4096 --repack", tokens=9) == ["-c", "4096", "--repack"]
    assert tool_args("", tokens=700) == ["-c", "768", "--no-repack"]


@pytest.mark.parametrize("identity, words", [
    ({"backend": "vllm", "target": "url"}, "a vllm run talks to a server over HTTP, which shows no layers. Localize "
                                           "with an in-process family (hf, openvino, python)"),
    ({"backend": "openai", "target": "url"}, "an openai run talks to a server over HTTP, which shows no layers."),
    ({"backend": "llamacpp", "target": "url"}, "A llamacpp run shows its tensors through llama.cpp's "
                                               "llama-eval-callback only when oracle launched the embedded"),
])
def test_an_http_family_names_the_in_process_family_and_the_commands(tmp_path, capsys, identity, words):
    report = planted_localize(tmp_path, reference=identity, candidate=identity)
    assert main(["localize", str(report), "--out", str(tmp_path / "loc")]) == 2
    err = capsys.readouterr().err
    assert words in err and "pytest --backend=hf-cpu --oracle-model MODEL --dtype float32 --record REF" in err
    assert "then run `oracle localize DIR`" in err


def test_a_llamacpp_reference_against_another_family_is_refused(tmp_path, capsys):
    llama = {"backend": "llamacpp", "target": "embedded", "model": {"path": "/nowhere.gguf"}}
    report = planted_localize(tmp_path, reference=llama, candidate={"backend": "hf-cpu", "server": {}})
    assert main(["localize", str(report), "--out", str(tmp_path / "loc")]) == 2
    assert "llama.cpp's printed tensors and another family's layers are not matched" in capsys.readouterr().err
