"""--launch-timeout is checked like every option: a bad value is a usage error naming the fix."""

import pytest


@pytest.mark.parametrize("value, message", [
    ("0", "*--launch-timeout '0': must be at least 1*"),
    ("soon", "*--launch-timeout 'soon': expected a positive integer, e.g. --launch-timeout 5*"),
])
def test_a_bad_launch_timeout_names_the_fix(pytester, value, message):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", f"--launch-timeout={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
