"""A usage error that quotes a command or a URL (printed by pytest itself, outside the terminal reporter) shows
the names and hides the secret values (no server needed)."""

import pytest


@pytest.mark.parametrize("args, shown, secret", [
    (["--launch=HF_TOKEN=hfsecret123456 serve 'unclosed"], "*--launch ?HF_TOKEN=[*][*][*] serve*check the quotes*",
     "hfsecret123456"),
    (["--oracle-url=ftp://me:urlsecret987@127.0.0.1:1"],
     "*server URL 'ftp://me:[*][*][*]@127.0.0.1:1': must start with http://*", "urlsecret987"),
])
def test_usage_errors_hide_secrets(pytester, args, shown, secret):
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([shown])
    assert secret not in "\n".join(result.outlines + result.errlines)


def test_an_unreachable_url_is_named_without_its_password(pytester):
    from oracle.targets.launched import free_port

    port = free_port()  # nothing listens there
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp",
                                f"--oracle-url=http://plainmarkeruser:pwsecret4242@127.0.0.1:{port}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--oracle-url http://plainmarkeruser:[*][*][*]@127.0.0.1:{port}: the server does not "
                                 "answer its health check*"])
    assert "pwsecret4242" not in "\n".join(result.outlines + result.errlines)
    report = next(pytester.path.glob("reports/*/identity.json"))  # the partial report written at start
    assert "pwsecret4242" not in report.read_text()
