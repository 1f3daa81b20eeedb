"""The launch parser is pure: commands in, named changes and rebuilt commands out."""

from __future__ import annotations

import shlex

import pytest

from oracle.launch_command import Change, LaunchError, apply, differences, parse_launch

LLAMA = "LD_LIBRARY_PATH=/opt/lib:/opt/bin /opt/bin/llama-server -m /m/q4_1.gguf --port {port} -np 1 --metrics"


def labels(a: str, b: str) -> list[str]:
    return [c.label for c in differences(parse_launch(a), parse_launch(b))]


def test_parse_splits_env_program_positionals_and_flags():
    cmd = parse_launch("A=1 B='x y' exec vllm serve /models/m --port {port} --temp -1 --enforce-eager --dtype=half "
                       "-- extra words")
    assert cmd.env == (("A", "1"), ("B", "x y")) and cmd.exec_ and cmd.program == "vllm"
    assert cmd.positionals == ["serve", "/models/m", "--", "extra", "words"]
    assert [(i.flag, i.value, i.eq) for i in cmd.items if i.flag] == [
        ("--port", "{port}", False), ("--temp", "-1", False), ("--enforce-eager", None, False),
        ("--dtype", "half", True)]


def test_render_round_trips_and_keeps_port_bare():
    for command in (LLAMA, "A=1 B='x y' vllm serve m --port {port} --dtype=half --temp -0.5 -- a b"):
        rendered = parse_launch(command).render()
        assert "{port}" in rendered and "'{port}'" not in rendered
        assert shlex.split(rendered) == shlex.split(command)
        assert parse_launch(rendered) == parse_launch(command)


def test_added_flags_are_one_change_each_with_their_values():
    assert labels(LLAMA, LLAMA + " -ctk q8_0 -fa on -t 1 -ub 32") == ["-ctk q8_0", "-fa on", "-t 1", "-ub 32"]


def test_changed_removed_env_program_and_positional_are_named():
    a = "X=1 Y=2 /a/llama-server m1.gguf --port {port} -c 8192 --metrics"
    b = "X=3 /b/llama-server m2.gguf extra --port {port} -c 4096"
    assert labels(a, b) == ["X=3 (was X=1)", "Y=2 (removed)", "program /b/llama-server (was /a/llama-server)",
                            "argument 1 m2.gguf (was m1.gguf)", "argument 2 extra (added)", "-c 4096 (was 8192)",
                            "--metrics (removed)"]


def test_the_model_file_is_a_changed_flag_value():
    assert labels(LLAMA, LLAMA.replace("q4_1", "q4_0")) == ["-m /m/q4_0.gguf (was /m/q4_1.gguf)"]


def test_identical_commands_have_no_differences():
    assert labels(LLAMA, LLAMA + "  ") == [] and labels("", "") == []
    assert labels("srv --port {port} --ctx-size=4096", "srv --port={port} --ctx-size 4096") == []


def test_apply_each_subset_builds_the_probe_command():
    a, b = parse_launch(LLAMA + " -c 8192"), parse_launch(LLAMA.replace(" --metrics", "") + " -c 4096 -ctk q8_0")
    changes = differences(a, b)
    assert [c.label for c in changes] == ["--metrics (removed)", "-c 4096 (was 8192)", "-ctk q8_0"]
    assert apply(a, changes) == b or shlex.split(apply(a, changes).render()) == shlex.split(b.render())
    assert apply(a, []) == a
    only_ctk = shlex.split(apply(a, changes[2:]).render())
    assert only_ctk[-4:] == ["-c", "8192", "-ctk", "q8_0"] and "--metrics" in only_ctk
    only_c = shlex.split(apply(a, changes[1:2]).render())
    assert only_c[-2:] == ["-c", "4096"] and "-ctk" not in only_c


def test_added_flags_go_before_a_trailing_command_after_double_dash():
    a = parse_launch("python wrap.py --port {port} -- llama-server --port {inner}")
    b = parse_launch("python wrap.py --port {port} -- llama-server --port {inner} -ctk q8_0")
    changes = differences(a, b)
    assert [c.kind for c in changes] == ["positional", "positional"]  # after `--` every word is positional
    assert shlex.split(apply(a, changes).render()) == shlex.split(b.render())
    c = parse_launch("python wrap.py --port {port} --position 7 -- cmd")
    probe = apply(parse_launch("python wrap.py --port {port} -- cmd"), differences(
        parse_launch("python wrap.py --port {port} -- cmd"), c))
    assert shlex.split(probe.render()) == shlex.split(c.render())


def test_added_and_removed_env_and_positionals_apply():
    a = parse_launch("vllm serve --port {port}")
    b = parse_launch("VLLM_X=1 vllm serve /m --port {port}")
    changes = differences(a, b)
    assert [c.label for c in changes] == ["VLLM_X=1", "argument 2 /m (added)"]
    assert apply(a, changes) == b
    assert apply(b, differences(b, a)) == a


def test_a_repeated_flag_is_one_change():
    a = parse_launch("srv --port {port} --lora x")
    b = parse_launch("srv --port {port} --lora x --lora y")
    (change,) = differences(a, b)
    assert change.label == "--lora x --lora y (was x)" and apply(a, [change]) == b


def test_secrets_are_redacted_in_labels():
    a = parse_launch("srv --port {port} --api-key sk-old-secret")
    b = parse_launch("OPENAI_API_KEY=sk-new-secret srv --port {port} --api-key sk-new-secret")
    text = " ".join(c.label for c in differences(a, b))
    assert "sk-new-secret" not in text and "sk-old-secret" not in text and "***" in text


@pytest.mark.parametrize("command, words", [
    ("srv --port {port} && rm -rf x", "'&&'"), ("srv --port {port}; echo", "';'"), ("srv | tee log", "'|'"),
    ("srv -m $HOME/m.gguf", "expand"), ("srv 'unclosed", "close the quote")])
def test_commands_bisect_cannot_take_apart_name_the_fix(command, words):
    with pytest.raises(LaunchError, match=words):
        parse_launch(command)


def test_negative_numbers_are_values_not_flags():
    cmd = parse_launch("srv --seed -1 -ngl -99 --flag")
    assert [(i.flag, i.value) for i in cmd.items] == [("--seed", "-1"), ("-ngl", "-99"), ("--flag", None)]


def test_change_is_hashable_and_comparable():
    c = Change("flag", "-t", None, None)
    assert c == Change("flag", "-t", None, None) and len({c, Change("flag", "-t", None, None)}) == 1


def test_wrappers_are_taken_apart_and_applied():
    a = parse_launch("llama-server -m /m --port {port}")
    b = parse_launch("exec env -u OMP X=1 taskset -c 0-3 llama-server -m /m --port {port}")
    assert (b.program, b.environment, [w.name for w in b.wrappers]) == ("llama-server", {"X": "1"}, ["env", "taskset"])
    assert parse_launch(b.render()) == b
    changes = differences(a, b)
    assert [c.label for c in changes] == ["X=1", "env -u OMP (added)", "taskset -c 0-3 (added)"]
    assert shlex.split(apply(a, changes).render()) == ["X=1", "env", "-u", "OMP", "taskset", "-c", "0-3",
                                                       "llama-server", "-m", "/m", "--port", "{port}"]
    assert apply(b, differences(b, a)).render() == "exec llama-server -m /m --port {port}"
