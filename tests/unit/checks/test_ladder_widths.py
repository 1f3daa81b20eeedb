"""`--ladder` presets (every:N, edges:N) beside its list: the widths they name, the gaps a list leaves, bad values."""

from __future__ import annotations

import pytest

from oracle.checks.conditions.widths import LadderSpec, edge_widths, ladder_value, never_tried, parse_ladder


def test_every_names_each_width_up_to_n():
    assert parse_ladder("every:4") == LadderSpec((1, 2, 3, 4), "every:4")
    assert parse_ladder(" every:1 ").widths == (1,)
    assert ladder_value("every: 8") == "every:8"


def test_edges_are_the_first_ten_and_each_power_of_two_with_its_neighbours():
    assert edge_widths(4) == (1, 2, 3, 4)
    assert edge_widths(16) == tuple(range(1, 11)) + (15, 16)
    assert parse_ladder("edges:65").widths == tuple(range(1, 11)) + (15, 16, 17, 31, 32, 33, 63, 64, 65)
    assert parse_ladder("edges:40").widths[-3:] == (31, 32, 33)
    assert parse_ladder("edges:1024").widths[-3:] == (513, 1023, 1024)


def test_a_plain_list_keeps_its_levels_and_names_the_widths_it_skips():
    spec = parse_ladder("8,1,2,4")
    assert spec == LadderSpec((1, 2, 4, 8)) and spec.text == "1,2,4,8" and ladder_value("8,1,2,4") == "1,2,4,8"
    assert never_tried(spec) == (3, 5, 6, 7)
    assert never_tried(parse_ladder("2,4")) == (3,)  # width 1 is the c1 run
    assert never_tried(parse_ladder("every:8")) == () and never_tried(parse_ladder("edges:65")) == ()


@pytest.mark.parametrize("value, message", [
    ("every:0", "N must be between 1 and 128"),
    ("every:x", "every:N needs a whole number of requests in flight after the colon, e.g. --ladder every:8"),
    ("edges:", "edges:N needs a whole number"),
    ("every:100000", "N must be between 1 and 128 (each width is a ladder level of its own: for a wider server use "
                     "edges:N or a list)"),
    ("edges:5000", "N must be between 1 and 1024"),
    ("1,2,every:4", "give either a list of widths or one preset"),
    ("every:4,edges:8", "give either a list of widths or one preset"),
    ("all:8", "give either a list of widths or one preset"),
])
def test_bad_values_name_the_fix(value, message):
    with pytest.raises(pytest.UsageError, match="--ladder") as exc:
        parse_ladder(value)
    assert message in str(exc.value)


@pytest.mark.parametrize("value, message", [
    ("every:0", "*--ladder 'every:0': N must be between 1 and 128*e.g. --ladder every:8*"),
    ("every:x", "*--ladder 'every:x': every:N needs a whole number*"),
    ("edges:", "*--ladder 'edges:': edges:N needs a whole number*"),
    ("every:100000", "*--ladder 'every:100000': N must be between 1 and 128*"),
    ("1,2,every:4", "*--ladder '1,2,every:4': give either a list of widths or one preset*"),
])
def test_bad_presets_are_usage_errors_before_any_request(pytester, value, message):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", f"--ladder={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR == 4
    result.stderr.fnmatch_lines([message])


def _settings(ladder, **extra):
    from types import SimpleNamespace

    from oracle.checks.conditions.options import settings_of
    from oracle.checks.descriptor import OptionContext

    option = SimpleNamespace(ladder=ladder, ladder_min=(), boots=1, ladder_mode="cycle", ladder_arrivals="at-once")
    for k, v in extra.items():
        setattr(option, k, v)
    return settings_of(option, OptionContext(urls=(), workers=1, family=None))


def test_a_preset_is_one_ladder_level_per_width_priced_as_any_level():
    from types import SimpleNamespace

    from oracle.checks.conditions.check import CHECK, plan_part
    from oracle.checks.descriptor import PlanContext

    settings = _settings("every:5")
    assert settings.ladder == (1, 2, 3, 4, 5) and settings.preset == "every:5" and settings.never_tried == ()
    options = SimpleNamespace(check=lambda name: settings)
    items = CHECK.items(SimpleNamespace(options=options))
    assert [i.name for i in items] == [f"ladder[c{w}]" for w in range(1, 6)]
    context = PlanContext(((60, 32),) * 3, options, False)
    # 3 prompts cycled in full waves: c5 sends one wave of 5 requests, each priced like the c1 run's.
    assert plan_part("ladder", 5, context).shapes == ((60, 32),) * 5
    listed = _settings("1,2,4,8", ladder_min=((8, 7, 8),))
    assert listed.preset == "" and listed.never_tried == (3, 5, 6, 7)
    assert _settings(()).ladder == ()  # no --ladder
