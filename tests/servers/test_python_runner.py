"""The python family (`--backend=python:MODULE:FACTORY`) on the real OpenVINO runtime: the example runner over the
embedded fp32 IR, compiled with `openvino.Core` and driven step by step, records an f16-kind reference and gates
itself; the same runner over the int4 IR fails --kld-max. Planted faults (tests/helpers/toy_runner.py: a toy model
through the same protocol) show the errors naming the runner, the finished records kept, and a chunked prefill
that moves a top-1 token failing `chunked-prefill`. A transformers model wrapped as a runner agrees with
--backend=hf. Tiny sizes: 1 prompt x 8 tokens (the faults: 2 prompts), one recorded reference shared by the module,
whole-vocabulary top-k (--logprobs 49152) so the raw logit cosine is there, a short chunked-prefill ladder (64, 300
tokens; the 8K figures are docs/runner.md's)."""

from __future__ import annotations

import json
from pathlib import Path

# Imported before pytester's in-process runs: they restore sys.modules after each, and a native module cannot be
# imported a second time.
import openvino  # noqa: F401
import pytest
from conftest import REPO, write_suite

# The whole module took 48 s on the loaded 2-core host.
pytestmark = pytest.mark.slow
VOCAB = "--logprobs=49152"  # the whole vocabulary: the raw logit cosine needs every row's logit shift

OV_RUNNER = f"python:{REPO / 'examples' / 'custom-runner' / 'ov_runner.py'}:make_runner"
HF_RUNNER = f"python:{REPO / 'examples' / 'custom-runner' / 'hf_runner.py'}:make_runner"
TOY = REPO / "tests" / "helpers" / "toy_runner.py"


def _suite(folder: Path, prompts: int = 2) -> Path:
    rows = [json.loads(line) for line in (REPO / "prompts" / "default.jsonl").read_text().splitlines()[:prompts]]
    return write_suite(folder, f"first{prompts}", rows)


def _run(pytester, backend: str, report: str, *extra: str, prompts: int = 1, tokens: int = 8, own_process=False):
    folder, suite = pytester.path / report, _suite(pytester.path, prompts)
    canaries = [] if any(a.startswith("--canaries") for a in extra) else ["--canaries=none"]
    run = pytester.runpytest_subprocess if own_process else pytester.runpytest
    result = run("-p", "no:cacheprovider", f"--backend={backend}", f"--oracle-suite={suite}",
                                f"--report-dir={folder}", *canaries, f"--max-tokens={tokens}", *extra)
    result.folder = folder
    return result


def _identity(folder: Path) -> dict:
    return json.loads((folder / "identity.json").read_text())


def _checks(folder: Path) -> dict[str, dict]:
    return {c["id"]: c for c in _identity(folder)["checks"]}


@pytest.fixture(scope="module")
def fp32_reference(tmp_path_factory) -> Path:
    """The fp32-IR runner's f16-kind reference (full-vocabulary top-k, the prompts' own log-probs), recorded once."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("runner")
    ref = folder / "ref"
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--backend={OV_RUNNER}",
                        f"--record={ref}", "--reference-kind=f16", f"--oracle-suite={_suite(folder, 1)}", "--canaries=none",
                        "--max-tokens=8", "--prefill-chunks=none", VOCAB, "--warmup=0",
                        f"--report-dir={folder / 'rec'}"],
                       cwd=folder, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:]
    rec = _npz(ref, "code-palindrome")
    assert rec["prompt_logprobs"] is not None and rec["logit_shift"] is not None and len(rec["logit_shift"]) == 8
    return ref


def _npz(ref: Path, pid: str) -> dict:
    import numpy as np

    with np.load(ref / "records" / "boot1-c1" / f"{pid}.npz") as arrays:
        return {k: arrays[k] if k in arrays else None for k in ("prompt_logprobs", "logit_shift")}


def test_fp32_ir_runner_gates_itself_exact_with_cosine_and_chunked_prefill(pytester, fp32_reference):
    """The same runner again: KLD 0, logit cosine 1.0 (centered and raw), the prompt's log-prob equal to the
    reference's, chunks of 16 and 64 keep every top-1 of one pass on the suite's path and on the ladder of a 300-token
    haystack prompt (64 and 300 tokens); the speed card is there; ladder and boots are refused by capability."""
    same = _run(pytester, OV_RUNNER, "same", f"--reference={fp32_reference}", "--kld-max=0.0001", VOCAB,
                "--prompt-logprob-max-delta=0.0001", "--prefill-chunks=16,64", "--prefill-lengths=64,300",
                "--runner-arg=chunk=512", "--warmup=0")
    assert same.ret == 0, same.stdout.str()[-3000:]
    rep, checks = _identity(same.folder), _checks(same.folder)
    overall = rep["logits"]["overall"]
    assert overall["mean_kld"] == 0.0 and overall["logit_cosine"] == pytest.approx(1.0, abs=1e-9)
    assert overall["logit_cosine_raw"] == pytest.approx(1.0, abs=1e-9) and overall["logit_cosine_ids"] == 49152
    assert "logit cosine (centered) 1.000000" in checks["logits"]["detail"]
    assert "logit cosine (raw) 1.000000" in checks["logits"]["detail"]
    assert checks["prompt-logprob"]["verdict"] == "pass" and rep["prompt_logprob"]["delta"] == 0.0
    chunked = rep["chunked_prefill"]
    assert set(chunked["modes"]) == {"chunks-16", "chunks-64"} and checks["chunked-prefill"]["verdict"] == "pass"
    suite16 = chunked["modes"]["chunks-16"]
    assert suite16["top1_differs"] == [] and suite16["overall"]["positions"] == 7
    ladder = chunked["ladder"]
    assert ladder["context"] == 8192 and ladder["lengths"] == [64, 300] and ladder["requests"]["one-pass"] == 1
    assert [r["tokens"] for r in ladder["modes"]["chunks-16"]["lengths"]] == [64, 300]
    assert [r["tokens"] for r in ladder["modes"]["chunks-64"]["lengths"]] == [300]  # 64 fits in one chunk
    assert all(r["top1_equal"] for m in ladder["modes"].values() for r in m["lengths"])
    said = checks["chunked-prefill"]["detail"]
    assert "chunks-16 ladder: top-1 equal at 2/2 prompt lengths (up to 300 tokens)" in said
    server = rep["identity"]["server"]
    assert server["runner_identity"]["driven_by"].startswith("openvino.Core().compile_model")
    assert server["vocab_size"] == 49152 and rep["speed"]["summary"]["ttft_s"]["prompts"] == 1
    refused = _run(pytester, OV_RUNNER, "ladder", "--ladder=1,2", "--boots=2")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*runs in this process and cannot honour --boots, --ladder*"])


def test_int4_ir_runner_fails_kld_max_and_reports_its_cosine(pytester, fp32_reference):
    int4 = _run(pytester, OV_RUNNER, "int4", f"--reference={fp32_reference}", "--runner-arg=ir=int4", VOCAB,
                "--kld-max=0.01", "--prompt-logprob-max-delta=0.01", "--prefill-chunks=none", "--warmup=0")
    assert int4.ret == 1, int4.stdout.str()[-3000:]
    rep, checks = _identity(int4.folder), _checks(int4.folder)
    assert checks["logits"]["outcome"] == "failed" and "> --kld-max 0.01" in checks["logits"]["detail"]
    overall = rep["logits"]["overall"]  # both over the whole vocabulary
    centered, raw = overall["logit_cosine"], overall["logit_cosine_raw"]
    assert 0.5 < centered < 0.999 and 0.5 < raw < 0.9999 and raw != centered
    assert f"logit cosine (centered) {centered:.6f}" in checks["logits"]["detail"]
    assert f"logit cosine (raw) {raw:.6f}" in checks["logits"]["detail"]
    assert checks["prompt-logprob"]["verdict"] == "fail" and rep["prompt_logprob"]["delta"] < -0.01
    assert rep["identity"]["server"]["runner_args"] == {"ir": "int4"}


def test_runner_faults_name_the_runner_and_keep_the_finished_records(pytester):
    """A factory that raises is refused at start (exit 4), logits one short stop the run (exit 2) naming the runner
    and both sizes, a runner that raises on the second prompt keeps the first prompt's records and a partial
    report (exit 2), and a chunked prefill that moves a top-1 token fails chunked-prefill (exit 1)."""
    broken = _run(pytester, f"python:{TOY}:factory_fails", "load", "--runner-arg=device=xpu", prompts=2)
    assert broken.ret == pytest.ExitCode.USAGE_ERROR
    broken.stderr.fnmatch_lines([f"*runner {TOY}:factory_fails: factory_fails(device='xpu') raised RuntimeError: "
                                 "no xpu device here*"])
    short = _run(pytester, f"python:{TOY}:wrong_size", "short", "--warmup=0", prompts=2)
    assert short.ret == 2
    said = _identity(short.folder)["interruption"]
    assert f"runner {TOY}:wrong_size: step() returned logits of shape (49151,); expected (49152,)" in said
    raises = _run(pytester, f"python:{TOY}:raises_on_second_prompt", "raises", "--warmup=0",
                  f"--record={pytester.path / 'never'}", prompts=2)
    assert raises.ret == 2
    rep = _identity(raises.folder)
    assert "prefill() raised RuntimeError: device lost (planted on the second prompt)" in rep["interruption"]
    assert f"runner {TOY}:raises_on_second_prompt" in rep["interruption"]
    kept = raises.folder / "records" / "boot1-c1"
    assert sorted(p.name for p in kept.iterdir()) == ["code-palindrome.json", "code-palindrome.npz"]
    assert list(rep["records"]["finished"]) == ["code-palindrome@boot1-c1"] and not (pytester.path / "never").exists()
    drift = _run(pytester, f"python:{TOY}:chunk_drift", "drift", "--prefill-chunks=16", "--prefill-lengths=7,64",
                 tokens=12)
    assert drift.ret == 1
    check = _checks(drift.folder)["chunked-prefill"]
    assert check["verdict"] == "fail" and "chunks-16: top-1 differs from one pass" in check["detail"]
    assert "chunks-16: top-1 differs from one pass at 1 ladder length(s), first 64 tokens" in check["detail"]


def test_a_transformers_model_wrapped_as_a_runner_agrees_with_the_hf_backend(pytester, monkeypatch):
    """The same float32 folder through --backend=hf (recorded as an f16-kind reference) and through the example
    runner: the same 8 tokens and KLD 0 with logit cosine 1.0. One torch thread: on a loaded 2-core host torch's two
    threads spin against each other (a step took 0.85 s instead of 0.08 s)."""
    torch = pytest.importorskip("torch")
    # Each gate in a process of its own: after another in-process hf run in this process, torch refuses to register
    # its c10d_functional library a second time (seen in the whole suite, not alone).

    from oracle.targets.openvino_export import hf_folder

    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the gates' own processes: one torch thread, as below in this one
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = hf_folder()
        ref = pytester.path / "hf-ref"
        hf = _run(pytester, "hf", "hf", f"--oracle-model={model}", f"--record={ref}", "--reference-kind=f16",
                  "--floor-dtype=none", "--warmup=0", prompts=1, tokens=8, own_process=True)
        assert hf.ret == 0, hf.stdout.str()[-3000:]
        wrapped = _run(pytester, HF_RUNNER, "wrapped", f"--runner-arg=model={model}", f"--reference={ref}",
                       "--kld-max=0", "--prefill-chunks=none", "--warmup=0", prompts=1, tokens=8, own_process=True)
    finally:
        torch.set_num_threads(threads)
    assert wrapped.ret == 0, wrapped.stdout.str()[-3000:]
    rep = _identity(wrapped.folder)
    assert "greedy path identical to the reference's" in _checks(wrapped.folder)["logits[code-palindrome]"]["detail"]
    assert rep["logits"]["overall"]["mean_kld"] == 0.0 and rep["logits"]["overall"]["positions"] == 8
