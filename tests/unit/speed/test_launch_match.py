"""The comparison's launch label: what reference and candidate held equal, in the field's words."""

from __future__ import annotations

import pytest

from oracle.launch_command import Change
from oracle.speed.launch_match import MATCHED, is_speculation, launch_match

BASE = ("LD_LIBRARY_PATH=/opt/llama/lib /opt/llama/bin/llama-server -m /models/smollm2.gguf --host 127.0.0.1 "
        "--port {port} -np 1 -c 8192 --metrics")


def test_the_same_command_is_matched():
    assert launch_match(BASE, BASE) == {"label": MATCHED, "speculation": [], "other": []}
    # `--c=1` and `--c 1` say the same; the order of flags is not a difference either
    assert launch_match(BASE.replace("-c 8192 --metrics", "--metrics -c 8192"), BASE)["label"] == MATCHED


def test_an_added_spec_type_is_matched_except_speculation():
    got = launch_match(f"{BASE} --spec-type ngram-simple", BASE)
    assert got["label"] == "matched_except_speculation: --spec-type ngram-simple"
    assert got["speculation"] == ["--spec-type ngram-simple"] and got["other"] == []


def test_a_draft_model_and_its_settings_are_speculation():
    got = launch_match(f"{BASE} -md /models/draft.gguf --draft-max 8 -ngld 99", BASE)
    assert got["label"] == "matched_except_speculation: -md /models/draft.gguf, --draft-max 8, -ngld 99"


def test_other_differences_are_listed_apart():
    got = launch_match(BASE.replace("-c 8192", "-c 4096") + " -ctk q8_0", BASE)
    assert got["label"] == "matched_except: -c 4096 (was 8192), -ctk q8_0"
    both = launch_match(BASE.replace("-np 1", "-np 2") + " --spec-type ngram-simple", BASE)
    assert both["label"] == "matched_except_speculation: --spec-type ngram-simple; matched_except: -np 2 (was 1)"
    removed = launch_match(BASE, f"{BASE} --spec-type ngram-simple")
    assert removed["label"] == "matched_except_speculation: --spec-type ngram-simple (removed)"
    env = launch_match("OMP_NUM_THREADS=4 " + BASE, BASE)
    assert env["label"] == "matched_except: OMP_NUM_THREADS=4 (was unset)" and env["speculation"] == []


def test_vllm_speculative_config_is_speculation():
    ref = "vllm serve /models/qwen --port {port} --max-model-len 4096"
    cand = ref + ' --speculative-config \'{"method": "ngram", "num_speculative_tokens": 4}\''
    assert launch_match(cand, ref)["label"].startswith("matched_except_speculation: --speculative-config ")


@pytest.mark.parametrize("flag", ["--spec-type", "--spec-ngram-size-n", "-md", "--model-draft", "--draft",
                                  "--draft-max", "--draft-p-min", "-cd", "--ctx-size-draft", "--device-draft",
                                  "-ngld", "--gpu-layers-draft", "-ctkd", "--speculative-config"])
def test_speculation_flags(flag):
    assert is_speculation(Change("flag", flag, None, ()))


@pytest.mark.parametrize("flag", ["-c", "--ctx-size", "-fa", "-ctk", "-np", "--spec", "-m", "-d"])
def test_not_speculation_flags(flag):
    assert not is_speculation(Change("flag", flag, None, ()))
    assert not is_speculation(Change("env", "SPEC", None, "1"))


def test_an_unknown_or_unreadable_command_is_not_compared():
    assert launch_match(BASE, None)["label"] == ("launch not compared: the reference gave no launch command (a "
                                                 "server given by --oracle-url)")
    assert launch_match(None, None)["label"].startswith("launch not compared: the reference and the candidate ")
    got = launch_match(BASE + " | tee log", BASE)
    assert got["label"].startswith("launch not compared: the command holds the shell operator '|'")


def test_an_environment_variable_through_env_is_named_not_the_program_env():
    plain = "llama-server -m /m.gguf --port {port} -ngl 99"
    got = launch_match(f"exec env GGML_CUDA_DISABLE_GRAPHS=1 {plain}", plain)
    assert got["label"] == "matched_except: GGML_CUDA_DISABLE_GRAPHS=1 (was unset)", got
    # the same variable as a prefix, or through env, is the same launch
    assert launch_match(f"exec env GGML_CUDA_DISABLE_GRAPHS=1 {plain}", f"GGML_CUDA_DISABLE_GRAPHS=1 {plain}") == {
        "label": MATCHED, "speculation": [], "other": []}
    assert launch_match(f"env X=2 {plain}", f"X=1 exec {plain}")["label"] == "matched_except: X=2 (was X=1)"


def test_taskset_numactl_and_nice_are_wrappers_named_by_their_options():
    plain = "/opt/bin/llama-server -m /m.gguf --port {port}"
    got = launch_match(f"nice -n 5 taskset -c 0-3 numactl --cpunodebind=0 -m 0 {plain} -t 4", plain)
    assert got["other"] == ["nice -n 5 (added)", "taskset -c 0-3 (added)", "numactl --cpunodebind=0 -m 0 (added)",
                            "-t 4"], got
    assert launch_match(f"taskset -c 0-7 {plain}", f"taskset -c 0-3 {plain}")["label"] == (
        "matched_except: taskset -c 0-7 (was taskset -c 0-3)")
    assert launch_match(plain, f"numactl -N 1 {plain}")["label"] == "matched_except: numactl -N 1 (removed)"
