"""Planted secrets: one real record run per carrier against the real llama-server, then everything the run wrote
(the report folder with its server logs, the reference), its terminal output and what `oracle diff` and
`oracle html` print are searched: the secret is nowhere, and the harmless marker planted beside it is found (so
the search really reads those files)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, launch_line
from proxy import FaultProxy

pytestmark = pytest.mark.slow

CARRIERS = ("prefix", "env-command", "flag", "server-args", "url", "environment")


def _secret() -> str:
    return "S3cr3t" + secrets.token_hex(12)  # a distinct random secret per run


def _oracle_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "oracle", *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=REPO)


def _files(*folders: Path) -> dict[Path, str]:
    return {p: p.read_bytes().decode("utf-8", errors="replace")
            for folder in folders for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def plant(gate_run, llama_tools, model_path, shared_server, monkeypatch, tmp_path):
    """Run a record run with the secret in one carrier; returns (result, reference, secret, marker, planted env)."""

    def run(carrier: str):
        secret, marker = _secret(), f"plainmarker{carrier.replace('-', '')}"
        echo = f"echo 'starting beside {marker} with {secret}'"  # the launched server's log echoes the secret
        planted_env: dict[str, str] = {}
        proxy = None
        if carrier == "prefix":
            args = [f"--launch={echo}; ORACLE_TEST_TOKEN={secret} ORACLE_TEST_MARKER={marker} "
                    f"{launch_line(llama_tools, model_path)}"]
        elif carrier == "env-command":
            args = [f"--launch=export ORACLE_TEST_PASSWORD={secret}; {echo}; env ORACLE_TEST_TOKEN={secret} "
                    f"ORACLE_TEST_MARKER={marker} {launch_line(llama_tools, model_path)}"]
        elif carrier == "flag":
            planted_env = {"ORACLE_API_KEY": secret}  # how oracle is given the key the server demands
            args = [f"--launch={echo}; ORACLE_TEST_MARKER={marker} "
                    f"{launch_line(llama_tools, model_path, f'--api-key {secret}')}"]
        elif carrier == "server-args":
            planted_env = {"ORACLE_API_KEY": secret}
            (tmp_path / marker).mkdir()
            (tmp_path / marker / "model.gguf").symlink_to(model_path)  # the marker reaches the server's log
            args = [f"--server-args=--api-key {secret} --alias {marker}", f"--oracle-model={tmp_path / marker / 'model.gguf'}"]
        elif carrier == "url":
            proxy = FaultProxy(shared_server.url, basic_auth=(marker, secret)).__enter__()
            args = [f"--oracle-url=http://{marker}:{secret}@127.0.0.1:{proxy.server.server_address[1]}"]
        else:  # the environment: identity's filtered environment would record VLLM_API_KEY
            planted_env = {"VLLM_API_KEY": secret, "HF_TOKEN": secret}
            monkeypatch.setenv("ORACLE_TEST_MARKER", marker)
            args = [f"--oracle-url={shared_server.url}"]
        for name, value in planted_env.items():
            monkeypatch.setenv(name, value)
        try:
            result = gate_run(*args, f"--record=ref-{carrier}", report=f"report-{carrier}")
        finally:
            if proxy is not None:
                proxy.__exit__(None, None, None)
        if proxy is not None:  # oracle sent the URL's credentials on every request
            assert proxy.authorized > 0 and proxy.unauthorized == 0, (proxy.authorized, proxy.unauthorized)
        return result, result.folder.parent / f"ref-{carrier}", secret, marker, planted_env

    return run


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_planted_secret_is_written_nowhere(carrier, plant, shared_reference):
    result, reference, secret, marker, planted_env = plant(carrier)
    terminal = "\n".join(result.outlines + result.errlines)
    assert result.ret == 0, terminal[-3000:]
    report = result.folder
    assert (report / "identity.json").is_file() and (reference / "manifest.json").is_file()
    # oracle diff and oracle html, from a shell without the planted variables: the files alone must be clean.
    env = {k: v for k, v in os.environ.items() if k not in planted_env} | {"PYTHONPATH": str(REPO)}
    diff = _oracle_cli("diff", str(report), str(shared_reference), env=env)
    assert diff.returncode == 0, diff.stdout + diff.stderr
    html = _oracle_cli("html", str(report), env=env)
    assert html.returncode == 0, html.stderr
    written = _files(report, reference)
    printed = {"terminal": terminal, "oracle diff": diff.stdout + diff.stderr, "oracle html": html.stdout + html.stderr}

    leaks = [str(p) for p, text in written.items() if secret in text] + [k for k, v in printed.items() if secret in v]
    assert leaks == [], f"the planted secret was written to {leaks}"

    # The positive control: the marker planted beside the secret is there, so these files were really read.
    where = [report / "identity.json", report / "identity.md", report / "identity.html", reference / "manifest.json"]
    logs = sorted(report.glob("server-boot*.log"))
    if carrier in ("prefix", "env-command", "flag", "server-args"):
        assert logs, f"no server log kept in {report}"
        where += logs
    missing = [str(p) for p in where if marker not in written[p]]
    assert missing == [], f"the marker {marker} is missing from {missing}"
    assert str(report) in terminal and str(report) in diff.stdout and str(report) in html.stdout
    if carrier != "url":  # a URL is instance identity, which oracle diff leaves out
        assert marker in diff.stdout, diff.stdout
    if carrier != "environment":  # the terminal header says what was gated
        assert marker in next(line for line in result.outlines if line.startswith("oracle: --backend"))
    ident = written[report / "identity.json"]
    expected = {"prefix": "ORACLE_TEST_TOKEN=***", "env-command": "env ORACLE_TEST_TOKEN=***",
                "flag": "--api-key ***", "server-args": "--api-key ***", "url": f"http://{marker}:***@",
                "environment": '"VLLM_API_KEY": "***"'}[carrier]
    assert expected in ident, "the name is kept, its value hidden"
    if carrier == "environment":
        assert "`VLLM_API_KEY=***`" in written[report / "identity.md"]
    if carrier in ("prefix", "env-command", "flag"):  # the echoed secret in the log became ***
        assert f"starting beside {marker} with ***" in "".join(written[p] for p in logs)


def test_a_launch_that_fails_names_its_command_and_log_without_the_secret(gate_run):
    secret, marker = _secret(), "plainmarkerfails"
    result = gate_run(f"--launch=: {{port}}; echo 'key {secret} beside {marker}'; ORACLE_TEST_TOKEN={secret} "
                      f"ORACLE_TEST_MARKER={marker} exit 3", report="report-fails")
    terminal = "\n".join(result.outlines + result.errlines)
    assert result.ret == 4, terminal
    assert "oracle could not start the target: the server exited with code 3" in terminal
    assert f"ORACLE_TEST_TOKEN=*** ORACLE_TEST_MARKER={marker}" in terminal  # the command, redacted
    assert f"key *** beside {marker}" in terminal  # its log tail, scrubbed
    log = result.folder / "server-boot1.log"
    written = _files(result.folder)
    assert secret not in terminal and [str(p) for p, t in written.items() if secret in t] == []
    assert f"key *** beside {marker}" in written[log]


def test_a_server_that_wants_a_key_oracle_was_not_given_names_oracle_api_key(gate_run, llama_tools, model_path,
                                                                            monkeypatch):
    secret = _secret()
    monkeypatch.delenv("ORACLE_API_KEY", raising=False)
    result = gate_run(f"--launch={launch_line(llama_tools, model_path, f'--api-key {secret}')}", report="report-nokey")
    terminal = "\n".join(result.outlines + result.errlines)
    assert result.ret == 4, terminal
    assert "HTTP 401" in terminal and "the server wants an API key: set ORACLE_API_KEY to it" in terminal
    assert "--api-key ***" in terminal and secret not in terminal
    assert [str(p) for p, t in _files(result.folder).items() if secret in t] == []
