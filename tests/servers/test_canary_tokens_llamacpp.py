"""Canaries compared token for token with the reference (real llama-server, real SmolLM2): a needle answered right
with other tokens fails the gate, named by its length and the position of the split; the same gate without the
fault passes; a reference recorded before canary completions were kept gates with the canaries not compared listed,
and passes.

One reference for the module: one suite prompt at 8 tokens and one 512-token needle, recorded against the shared
server; each gate reaches that server through a FaultProxy (planting a change, or passing everything).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import datasets  # noqa: F401  (imported here, outside pytester's in-process runs: pyarrow cannot load twice)
import httpx
import pytest

from conftest import NO_WARMUP, gate_argv, gate_env, tiny_rows, write_suite
from proxy import FaultProxy, change_token_for_prompt_length

pytestmark = pytest.mark.slow

LENGTH, DEPTH = 512, 0
NEEDLE = f"needle[{LENGTH}-d{DEPTH}]"
ARGS = [*NO_WARMUP, "--canaries=needle", f"--needle-lengths={LENGTH}", f"--needle-depths={DEPTH}"]


@pytest.fixture(scope="module")
def needle_reference(shared_server, tmp_path_factory):
    """(reference folder, suite): recorded once for the module, in a pytest process of its own."""
    folder = tmp_path_factory.mktemp("canary-tokens")
    (folder / "pytest.ini").write_text("[pytest]\n")  # a rootdir of its own, away from the project's tests
    suite = write_suite(folder, "one", tiny_rows()[:1])
    cmd = gate_argv("-q", f"--oracle-url={shared_server.url}", f"--oracle-suite={suite}", "--max-tokens=8", *ARGS,
                    f"--record={folder / 'ref'}", f"--report-dir={folder / 'rec'}")
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600, env=gate_env())
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return folder / "ref", suite


def report(folder) -> dict:
    return json.loads((folder / "identity.json").read_text())


def test_the_reference_keeps_the_needles_completion(needle_reference):
    ref, _ = needle_reference
    manifest = json.loads((ref / "manifest.json").read_text())
    assert manifest["schema_version"] == 2
    row = manifest["canaries"][NEEDLE]
    assert row["ok"] is True, row  # answered right: the fault below keeps it right
    assert (ref / "records" / "canaries" / "boot1-c1" / f"{NEEDLE}.npz").is_file() and row["completion_sha256"]


def test_a_gate_without_the_fault_compares_the_needle_exact(needle_reference, shared_server, gate_run):
    ref, suite = needle_reference
    with FaultProxy(shared_server.url) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", f"--reference={ref}", *ARGS, suite=suite, max_tokens=8, report="same")
    assert result.ret == 0, result.stdout.str()[-3000:]
    data = report(result.folder)
    assert data["canaries"][NEEDLE]["tokens_vs_reference"]["verdict"] == "exact"
    checks = {c["id"]: (c["verdict"], c["outcome"]) for c in data["checks"]}
    assert checks[f"{NEEDLE}:tokens"] == ("exact", "passed") and checks[NEEDLE] == ("pass", "passed")


def test_one_token_changed_after_the_needles_digits_fails_naming_its_length_and_position(needle_reference,
                                                                                      shared_server, gate_run):
    from oracle.store.reference import load_reference

    ref, suite = needle_reference
    recorded = load_reference(ref).side_record("canaries", NEEDLE)
    value = json.loads((ref / "manifest.json").read_text())["canaries"][NEEDLE]["expected"]
    ids = recorded.completion_ids

    def text(n: int) -> str:
        return httpx.post(f"{shared_server.url}/detokenize", json={"tokens": ids[:n]}).json()["content"]

    position = next(n for n in range(len(ids) + 1) if value in text(n))  # the first token after the 7 digits
    assert position < len(ids), (value, text(len(ids)))
    with FaultProxy(shared_server.url, rewrite_chunk=change_token_for_prompt_length(
            prompt_tokens=LENGTH, position=position)) as proxy:
        result = gate_run(f"--oracle-url={proxy.url}", f"--reference={ref}", *ARGS, suite=suite, max_tokens=8,
                          report="moved")
    assert result.ret == 1
    result.assert_outcomes(passed=3, failed=1)  # tokens[one prompt], cache-zero, speculation; the needle
    row = report(result.folder)["canaries"][NEEDLE]
    assert (row["ok"], row["verdict"], row["extracted"]) == (True, "pass", value)  # its answer is still right
    tokens = row["tokens_vs_reference"]
    assert (tokens["verdict"], tokens["first_divergence"], tokens["length"], tokens["depth"]) == (
        "divergent", position, LENGTH, DEPTH)
    checks = {c["id"]: (c["verdict"], c["outcome"]) for c in report(result.folder)["checks"]}
    assert checks[f"{NEEDLE}:tokens"] == ("divergent", "failed") and checks[NEEDLE] == ("pass", "passed")
    result.stdout.fnmatch_lines([f"needle[[]{LENGTH}-d{DEPTH}[]]:tokens: divergent: the {LENGTH}-token needle at "
                                 f"depth {DEPTH}% answered right with other tokens than the reference: first split "
                                 f"at completion token {position} of {len(ids)} *"])
    assert f"{NEEDLE}:tokens: divergent:" in (result.folder / "identity.md").read_text()


def schema_1_copy(ref, folder):
    """The reference as the oracle before canary completions wrote it: schema 1, no records/canaries/."""
    from oracle.store.reference import manifest_digest

    old = folder / "old-ref"
    shutil.copytree(ref, old)
    shutil.rmtree(old / "records" / "canaries")
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["schema_version"] = 1
    manifest["files"] = {k: v for k, v in manifest["files"].items() if not k.startswith("records/canaries/")}
    for row in manifest["canaries"].values():
        row.pop("completion_sha256", None)
    manifest["manifest_sha256"] = manifest_digest(manifest)
    (old / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return old


def test_a_reference_without_canary_completions_lists_the_canaries_not_compared_and_passes(
        needle_reference, shared_server, gate_run, tmp_path):
    ref, suite = needle_reference
    old = schema_1_copy(ref, tmp_path)
    with FaultProxy(shared_server.url, rewrite_chunk=change_token_for_prompt_length(
            prompt_tokens=LENGTH, position=15)) as proxy:  # a change nobody can see without the reference's tokens
        result = gate_run(f"--oracle-url={proxy.url}", f"--reference={old}", *ARGS, suite=suite, max_tokens=8,
                          report="old")
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.assert_outcomes(passed=4)
    data = report(result.folder)
    assert data["canaries"][NEEDLE]["tokens_vs_reference"] == {
        "verdict": "not-compared",
        "why": "the reference was recorded before oracle kept canary completions (schema 1)"}
    assert f"{NEEDLE}:tokens" not in {c["id"] for c in data["checks"]}
    note = (f"canaries not compared token for token (the reference {old} was recorded before oracle kept canary "
            f"completions (schema 1); re-record it with `pytest --backend=... --record {old} --record-overwrite` "
            f"to compare them): {NEEDLE}")
    assert note in data["notes"]
    assert note in (result.folder / "identity.md").read_text()
    assert f"oracle: {note}" in result.stdout.str()
