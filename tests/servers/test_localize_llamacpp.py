"""`oracle localize` on the llamacpp family through llama.cpp's own llama-eval-callback (built by .ci/run with
`python -m oracle.localize.llamacpp_tool`; a missing build fails here with that command, never skips), on the
embedded SmolLM2 GGUF: the embedded llama-server's flags `-ctk q8_0` (a q8_0 K cache) against none (f16) name a
first tensor, with the tool's own printouts kept in the localize folder; the same flags against themselves name
none. The gate reports are planted (tests/helpers/planted_localize.py: two identities and a 9-token path), the
tool runs are real: 3 per case, a second or two each."""

from __future__ import annotations

import json

import pytest
from planted_localize import COMPLETION_IDS, PROMPT_IDS, planted_localize

from oracle.cli import main
from oracle.targets.cache import default_model

pytestmark = pytest.mark.slow


def _llamacpp(server_args: str | None) -> dict:
    return {"backend": "llamacpp", "target": "embedded", "model": {"path": str(default_model())},
            "server_args": server_args}


def test_a_q8_0_k_cache_against_f16_names_a_first_tensor_with_the_tools_output_kept(tmp_path, capsys):
    report = planted_localize(tmp_path, reference=_llamacpp(None), candidate=_llamacpp("-ctk q8_0"))
    out = tmp_path / "loc"
    assert main(["localize", str(report), "--out", str(out)]) == 0
    data = json.loads((out / "localize.json").read_text())
    loc = data["localize"]
    assert data["status"] == "localized" and data["candidate"]["server_args"] == "-ctk q8_0"
    # The K cache is quantized (the tool prints no values of a quantized tensor): the attention's output of layer 0
    # is the first printed tensor to move, layer 0's output the first whole layer; nothing before it moves.
    assert loc["first_out_of_band"] == "kqv_out-0" and loc["first_layer_out_of_band"] == "l_out-0"
    names = [r["name"] for r in loc["rows"]]
    assert not any(r["out_of_band"] for r in loc["rows"][:names.index("kqv_out-0")])
    assert loc["lens"] is None and any(n.startswith("coarse: llama.cpp's llama-eval-callback") for n in loc["notes"])
    path = len(PROMPT_IDS) + 3
    assert f"the path's text tokenizes back to the same {path} ids in llama-eval-callback" in loc["notes"]
    kept = sorted(p.name for p in out.iterdir() if p.name.startswith("llamacpp-"))
    assert [k for k in kept if k.endswith(".out.txt")] == ["llamacpp-candidate.out.txt", "llamacpp-reference-1.out.txt",
                                                          "llamacpp-reference-2.out.txt"]
    assert "common_debug_cb_eval:                kqv_out-0" in (out / "llamacpp-candidate.out.txt").read_text()
    assert "-ctk q8_0" in (out / "llamacpp-candidate.log.txt").read_text().splitlines()[0]
    assert "first layer out of band: l_out-0" in capsys.readouterr().out
    assert COMPLETION_IDS  # the path is the reference's completion up to the split


def test_the_same_flags_against_themselves_name_no_tensor(tmp_path):
    report = planted_localize(tmp_path, reference=_llamacpp("-ctk q8_0"), candidate=_llamacpp("-ctk q8_0"))
    assert main(["localize", str(report), "--out", str(tmp_path / "loc")]) == 1
    data = json.loads((tmp_path / "loc" / "localize.json").read_text())
    assert data["status"] == "within-band" and data["localize"]["first_out_of_band"] is None
    assert len(data["localize"]["rows"]) > 100  # every layer's printed tensors were compared
