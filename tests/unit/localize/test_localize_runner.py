"""`oracle localize` on python runners (tests/helpers/toy_runner.py's LayeredToy: the runner protocol's optional
layer_outputs), and its refusals: a runner with layer k perturbed is localized to k and to no layer before it, for
several k; the runner against itself names no layer; a runner without layers, a missing folder, a report with no
split, an HTTP family's report and an --out inside the report end in their own words with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from planted_localize import COMPLETION_IDS, PROMPT_IDS, planted_localize
from planted_report import planted_report
from toy_runner import LayeredToy, ToyRunner

from oracle.cli import main
from oracle.localize import compare_layers
from oracle.localize.runner_layers import NoLayers, runner_capture

TOY = Path(__file__).resolve().parents[2] / "helpers" / "toy_runner.py"
PATH = PROMPT_IDS + COMPLETION_IDS[:3]


def _python(perturb: str | None = None) -> dict:
    return {"backend": f"python:{TOY}:layered", "server": {"runner_args": {"perturb": perturb} if perturb else {}}}


@pytest.mark.parametrize("k", [0, 2, 5])
def test_a_runner_perturbing_layer_k_is_localized_to_k(k):
    reference = runner_capture(LayeredToy(), PATH, where="toy")
    result = compare_layers(reference, runner_capture(LayeredToy(), PATH, where="toy"),
                            runner_capture(LayeredToy(k), PATH, where="toy"))
    assert result.first_layer_out_of_band.name == f"layers.{k}"
    assert not any(r.out_of_band for r in result.rows[:k])


def test_the_same_runner_against_itself_names_no_layer():
    captures = [runner_capture(LayeredToy(), PATH, where="toy") for _ in range(3)]
    assert compare_layers(*captures).first_out_of_band is None


def test_a_runner_without_layer_outputs_shows_no_layers():
    with pytest.raises(NoLayers, match=r"toy: this runner shows no layers: give it the optional method "
                                       r"layer_outputs\(token_ids\)"):
        runner_capture(ToyRunner(), PATH, where="toy")


def test_layer_outputs_of_the_wrong_shape_are_named():
    class Short(LayeredToy):
        def layer_outputs(self, token_ids):
            return {"layers.0": super().layer_outputs(token_ids)["layers.0"][:-1]}

    with pytest.raises(NoLayers, match=r"\['layers.0'\] has shape \(8, 16\); expected \(9, ...\)"):
        runner_capture(Short(), PATH, where="toy")


def test_oracle_localize_names_the_perturbed_layer_in_its_own_new_folder(tmp_path, capsys):
    report = planted_localize(tmp_path, reference=_python(), candidate=_python("3"))
    before = sorted(p.name for p in report.iterdir())
    out = tmp_path / "loc"
    assert main(["localize", str(report), "--out", str(out)]) == 0
    data = json.loads((out / "localize.json").read_text())
    assert data["localize"]["first_layer_out_of_band"] == "layers.3" and data["status"] == "localized"
    assert data["split"] == 3 and data["path_tokens"] == len(PATH)
    assert [r["out_of_band"] for r in data["localize"]["rows"]] == [False] * 3 + [True] * 3
    assert "| layers.3 |" in (out / "localize.md").read_text()
    html = (out / "localize.html").read_text()
    assert "<svg" in html and "class=first" in html and "first out of band: layers.3" in html
    assert sorted(p.name for p in report.iterdir()) == before  # nothing written into the sealed report
    assert "first layer out of band: layers.3" in capsys.readouterr().out


def test_oracle_localize_of_a_runner_against_itself_exits_1(tmp_path):
    report = planted_localize(tmp_path, reference=_python(), candidate=_python())
    assert main(["localize", str(report), "--out", str(tmp_path / "loc")]) == 1
    data = json.loads((tmp_path / "loc" / "localize.json").read_text())
    assert data["status"] == "within-band" and data["localize"]["first_out_of_band"] is None


@pytest.mark.parametrize("case, words", [
    ("missing", "no such folder; give the report folder a gate run wrote"),
    ("no-split", "no prompt split from the reference in this gate run; there is no split to localize"),
    ("http", "a llamacpp run talks to a server over HTTP, which shows no layers. Localize with an in-process "
             "family (hf, openvino, python)"),
    ("not-gate", "a record report; oracle localize needs a gate report"),
    ("no-layers", "this runner shows no layers"),
    ("out-inside", "oracle would write with --out where it reads REPORT_DIR"),
])
def test_bad_inputs_end_in_their_own_words_with_exit_2(tmp_path, capsys, case, words):
    out = ["--out", str(tmp_path / "loc")]
    if case == "missing":
        report = tmp_path / "nowhere"
    elif case == "no-split":
        report = planted_localize(tmp_path, reference=_python(), candidate=_python("1"), split=None)
    elif case == "http":
        report = planted_report(tmp_path, splits={"b": 3})
    elif case == "not-gate":
        report = planted_localize(tmp_path, reference=_python(), candidate=_python("1"), mode="record")
    elif case == "no-layers":
        toy = {"backend": f"python:{TOY}:toy", "server": {"runner_args": {}}}
        report = planted_localize(tmp_path, reference=toy, candidate=toy)
    else:
        report = planted_localize(tmp_path, reference=_python(), candidate=_python("1"))
        out = ["--out", str(report / "loc")]
    assert main(["localize", str(report), *out]) == 2
    err = capsys.readouterr().err
    assert err.startswith("oracle localize: ") and words in err
    if case == "http":
        assert "oracle localize DIR" in err  # the command to run instead
