"""The openvino family on the real OpenVINO runtime (CPU), 4 prompts x 64 tokens, with the embedded IRs exported
from the SmolLM2 GGUF in their own venv (`python -m oracle.targets.openvino_export`, cached by version). One
f16-kind reference (the fp32 IR with the f32 properties) is recorded once and shared by the module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# Imported before pytester's in-process runs: they restore sys.modules after each, and a native module cannot be
# imported a second time.
import openvino as ov
import openvino_genai  # noqa: F401
import openvino_tokenizers  # noqa: F401
import pytest
from conftest import REPO, SMALL_CANARIES, SMALL_CANARY_KEYWORDS, assert_small_canaries_ran, write_suite

from oracle.targets.openvino_export import openvino_model

pytestmark = pytest.mark.slow


def _weight_types(xml: Path) -> set[str]:
    """The element types of the IR's weight constants (the MatMul weights of an int4 IR are u4/i4)."""
    model = ov.Core().read_model(xml)
    return {op.get_output_element_type(0).get_type_name() for op in model.get_ops() if op.get_type_name() == "Constant"}


def test_oracle_models_path_names_the_int4_ir_whose_weights_are_int4():
    r = subprocess.run([sys.executable, "-m", "oracle.cli", "models", "--path", "openvino-int4"],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr
    folder = Path(r.stdout.strip().splitlines()[-1])
    assert (folder / "openvino_model.xml").is_file() and (folder / "openvino_tokenizer.xml").is_file()
    types = _weight_types(folder / "openvino_model.xml")
    assert types & {"u4", "i4"}, types
    fp32 = subprocess.run([sys.executable, "-m", "oracle.cli", "models", "--path", "openvino-fp32"],
                          capture_output=True, text=True, timeout=1800)
    assert fp32.returncode == 0, fp32.stderr
    assert not _weight_types(Path(fp32.stdout.strip().splitlines()[-1]) / "openvino_model.xml") & {"u4", "i4"}


F32 = "--ov-config=INFERENCE_PRECISION_HINT=f32,KV_CACHE_PRECISION=f32,DYNAMIC_QUANTIZATION_GROUP_SIZE=0"


def _suite(folder: Path) -> Path:
    return write_suite(folder, "four", [json.loads(line) for line in
                                        (REPO / "prompts" / "default.jsonl").read_text().splitlines()[:4]])


def _args(suite: Path, report: Path, *extra: str) -> list[str]:
    canaries = [] if any(a.startswith("--canaries") for a in extra) else ["--canaries=none"]
    return ["-p", "no:cacheprovider", f"--oracle-suite={suite}", f"--report-dir={report}", *canaries, "--max-tokens=64",
            *extra]


@pytest.fixture(scope="module")
def f32_reference(tmp_path_factory) -> Path:
    """The fp32 IR with the f32 properties, recorded once as an f16-kind reference (full-vocabulary top-k)."""
    folder = tmp_path_factory.mktemp("openvino")
    ref = folder / "ref"
    r = subprocess.run([sys.executable, "-m", "pytest", "--backend=openvino-cpu", F32, f"--record={ref}",
                        "--reference-kind=f16", *_args(_suite(folder), folder / "rec")],
                       cwd=folder, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:]
    return ref


def _gate(pytester, reference: Path, report: str, *extra: str):
    folder = pytester.path / report
    result = pytester.runpytest("--backend=openvino-cpu", f"--reference={reference}",
                                *_args(_suite(pytester.path), folder, *extra))
    result.folder = folder
    return result


def _identity(folder: Path) -> dict:
    return json.loads((folder / "identity.json").read_text())


def _checks(folder: Path) -> dict[str, dict]:
    return {c["id"]: c for c in _identity(folder)["checks"]}


def test_the_same_config_is_exact_across_boots_and_the_ladder_and_its_properties_are_identity(pytester,
                                                                                             f32_reference):
    """The f32 properties: 4/4 exact against the reference, boot 2 (a fresh pipeline) exact, c4 exact."""
    same = _gate(pytester, f32_reference, "same", F32, "--boots=2", "--ladder=1,4", *SMALL_CANARIES, "-k",
                 "code-palindrome or code-hashmap or math-derivative or math-word or logits or boot or ladder or "
                 + SMALL_CANARY_KEYWORDS)
    assert same.ret == 0, same.stdout.str()[-3000:]
    rep = _identity(same.folder)
    server = rep["identity"]["server"]
    assert server["ov_config"] == {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32",
                                   "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}
    assert server["device"] == "CPU" and server["build"].startswith("openvino 2026.4.1")
    checks = _checks(same.folder)
    paths = [c for cid, c in checks.items() if cid.startswith("logits[")]
    assert len(paths) == 4 and all("greedy path identical to the reference's" in c["detail"] for c in paths)
    assert rep["summary"]["logits"]["mean_kld"] == 0.0
    assert checks["boot[2]"]["verdict"] == "exact" and rep["boots"]["2"]["detail"] == "boot 2: 4/4 exact"
    c4 = checks["ladder[c4]"]
    assert c4["outcome"] == "passed" and c4["verdict"] == "exact", c4
    assert_small_canaries_ran(rep)
    assert rep["speed"]["summary"]["ttft_s"]["prompts"] == 4


def test_int8_passes_the_kld_gate_and_int4_fails_it(pytester, f32_reference):
    int8 = _gate(pytester, f32_reference, "int8", F32, "--kld-max=0.02", "--allow-near-ties",
                 f"--oracle-model={openvino_model('int8')}")
    assert int8.ret == 0, int8.stdout.str()[-3000:]
    assert _checks(int8.folder)["logits"]["outcome"] == "passed"
    int4 = _gate(pytester, f32_reference, "int4", F32, "--kld-max=0.02", "--allow-near-ties",
                 f"--oracle-model={openvino_model('int4')}")
    assert int4.ret == 1
    assert _checks(int4.folder)["logits"]["outcome"] == "failed"


def test_cpu_defaults_fail_the_ladder(pytester, f32_reference):
    """OpenVINO's CPU defaults (bf16 compute, u8 KV cache, dynamic quantization): c4 splits from c1. The f32
    properties' c4 is exact in the test above."""
    defaults = _gate(pytester, f32_reference, "defaults", "--ladder=1,4", "--logprobs=5")
    assert defaults.ret == 1
    c4 = _checks(defaults.folder)["ladder[c4]"]
    assert c4["outcome"] == "failed" and _identity(defaults.folder)["ladder"]["c4"]["first_divergences"], c4
