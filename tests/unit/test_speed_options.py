"""The speed options' resolution of `--reference-launch recorded` (pure: a reference's manifest)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from oracle.checks.speed_ab.options import InterleaveOptions, resolve_reference_launch


def _ref(command):
    return SimpleNamespace(path="refs/r", manifest={"identity": {"launch_command": command}})


def test_recorded_becomes_the_reference_launch_command():
    ab = resolve_reference_launch(InterleaveOptions(command="recorded"), _ref("llama-server --port {port}"))
    assert ab.command == "llama-server --port {port}" and ab.on
    given = InterleaveOptions(command="x --port {port}")
    assert resolve_reference_launch(given, _ref(None)) is given
    assert not InterleaveOptions().on


@pytest.mark.parametrize("command, message", [
    (None, "keeps no launch command (it was recorded against a server given by --oracle-url)"),
    ("HF_TOKEN=*** vllm serve m --port {port}", "had secrets redacted (***)"),
])
def test_recorded_without_a_usable_command_names_the_fix(command, message):
    with pytest.raises(pytest.UsageError, match=r"give the .*--reference-launch CMD") as err:
        resolve_reference_launch(InterleaveOptions(command="recorded"), _ref(command))
    assert message in str(err.value)
