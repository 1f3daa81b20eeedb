"""--sweep values as axes, the grid's order and folder names, and each point's launch command (no server)."""

from __future__ import annotations

import pytest

from oracle.sweep.grid import Axis, SweepUsageError, grid, parse_axis
from oracle.sweep.points import PointTarget, with_settings
from oracle.sweep.session import _user_args


@pytest.mark.parametrize("text, axis", [
    ("-ctk=f16,q8_0", Axis("flag", "-ctk", ("f16", "q8_0"))),
    ("-ctk f16,q8_0", Axis("flag", "-ctk", ("f16", "q8_0"))),  # argparse lets a value with a space through
    ("--spec-draft-n-max=2,3", Axis("flag", "--spec-draft-n-max", ("2", "3"))),
    ("OMP_NUM_THREADS=1, 2", Axis("env", "OMP_NUM_THREADS", ("1", "2"))),
    ("--spec-type=ngram-simple", Axis("flag", "--spec-type", ("ngram-simple",))),  # one point
])
def test_an_axis_is_a_flag_or_an_environment_variable(text, axis):
    assert parse_axis(text) == axis


@pytest.mark.parametrize("text, words", [
    ("ctk=f16,q8_0", "'ctk' is neither a flag (it starts with '-') nor an environment variable (in capitals); for "
                     "the flag write --sweep=-ctk=f16,q8_0"),
    ("-ctk", "expected SETTING=V1,V2,..., e.g. --sweep=-ctk=f16,q8_0 (a launch flag)"),
    ("-ctk=", "expected SETTING=V1,V2"),
    ("-ctk=f16,", "an empty value"),
    ("-t=1,2,1", "the value '1' is listed twice"),
    ("-=1,2", "'-' is not a flag name"),
])
def test_a_bad_axis_names_the_fix(text, words):
    with pytest.raises(SweepUsageError) as exc:
        parse_axis(text)
    assert words in str(exc.value)


def test_the_grid_runs_the_axes_in_order_the_last_fastest():
    points = grid([parse_axis("-ctk=f16,q8_0"), parse_axis("-t=1,2")])
    assert [(p.index, p.label) for p in points] == [(1, "-ctk f16, -t 1"), (2, "-ctk f16, -t 2"),
                                                    (3, "-ctk q8_0, -t 1"), (4, "-ctk q8_0, -t 2")]
    assert [p.folder for p in points] == ["01-ctk-f16_t-1", "02-ctk-f16_t-2", "03-ctk-q8_0_t-1", "04-ctk-q8_0_t-2"]
    assert grid([parse_axis("-t=1,2")])[1].folder == "02-t-2"


def test_an_axis_given_twice_is_refused():
    with pytest.raises(SweepUsageError, match="--sweep names -t more than once: give all its values in one"):
        grid([parse_axis("-t=1"), parse_axis("-t=2")])


def test_a_secret_value_is_masked_in_labels_and_left_out_of_folders():
    (point,) = grid([parse_axis("--api-key=sk-live-123456")])
    assert point.label == "--api-key ***" and point.folder == "01-api-key"
    assert "sk-live" not in point.folder


def test_a_point_sets_a_flag_where_it_stood_adds_a_new_one_before_trailing_words_and_env_in_front():
    base = "A=1 llama-server -m m.gguf --port {port} -ctk f16 -ctk f32 -- extra"
    (point,) = grid([parse_axis("-ctk=q8_0"), parse_axis("-t=2"), parse_axis("OMP_NUM_THREADS=1")])
    target = PointTarget.of(point, launch=base, server_args="")
    assert target.launch == "A=1 OMP_NUM_THREADS=1 llama-server -m m.gguf --port {port} -ctk q8_0 -t 2 -- extra"
    assert target.option_args == [f"--launch={target.launch}"] and target.env == {}
    assert with_settings("srv --c=4096", grid([parse_axis("--c=8192")])[0].settings) == "srv --c 8192"


def test_with_the_embedded_server_flags_go_to_server_args_and_env_to_the_points_process():
    (point,) = grid([parse_axis("-ctk=q8_0"), parse_axis("OMP_NUM_THREADS=1")])
    target = PointTarget.of(point, launch=None, server_args="-np 4 -ctk f16")
    assert (target.launch, target.server_args, target.env) == (None, "-np 4 -ctk q8_0", {"OMP_NUM_THREADS": "1"})
    assert target.option_args == ["--server-args=-np 4 -ctk q8_0"]
    (bare,) = grid([parse_axis("OMP_NUM_THREADS=2")])
    assert PointTarget.of(bare, launch=None, server_args="").option_args == []


def test_a_points_gate_gets_the_users_other_arguments():
    args = ("-q", "--backend=llamacpp", "--sweep", "-t 1,2", "--sweep=-ctk=f16", "--sweep-max", "2", "--launch",
            "srv {port}", "--report-dir=out", "--sweep-no-repro", "--reference=ref", "--max-tokens=8", "--server-args=x")
    assert _user_args(args) == ("-q", "--backend=llamacpp", "--reference=ref", "--max-tokens=8")
