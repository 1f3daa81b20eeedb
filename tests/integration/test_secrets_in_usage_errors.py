"""A usage error that quotes a command or a URL (printed by pytest itself, outside the terminal reporter) shows
the names and hides the secret values (no server needed)."""

import pytest


@pytest.mark.parametrize("args, shown, secret", [
    (["--launch=HF_TOKEN=hfsecret123456 serve 'unclosed"], "*--launch ?HF_TOKEN=[*][*][*] serve*check the quotes*",
     "hfsecret123456"),
    (["--url=ftp://me:urlsecret987@127.0.0.1:1"],
     "*server URL 'ftp://me:[*][*][*]@127.0.0.1:1': must start with http://*", "urlsecret987"),
])
def test_usage_errors_hide_secrets(pytester, args, shown, secret):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([shown])
    assert secret not in "\n".join(result.outlines + result.errlines)
