"""The redaction rules: which names are secret, each carrier form, what stays, and the chokepoints' helpers."""

from __future__ import annotations

import io
import json
import resource

import pytest

from oracle.redaction import (MASK, PublicStream, public_text, redact_command, redact_text, redact_url,
                              remember_secrets, scrub_file, secret_name, secret_values)


@pytest.mark.parametrize("name", ["HF_TOKEN", "TOKEN", "VLLM_API_KEY", "KEY", "OPENAI_API_KEY", "ORACLE_API_KEY",
                                  "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "PGPASSWORD", "LLAMA_ARG_PASSWORD",
                                  "DB_PASS", "PASS", "BASIC_AUTH", "AUTHORIZATION", "GOOGLE_CREDENTIALS",
                                  "MY_SECRET_THING", "--api-key", "--api_key", "--hf-token", "-hft", "--token",
                                  "--password", "--api-key-file", "--ssl-key-file", "apiKey", "accessToken",
                                  "Authorization", "Proxy-Authorization", "X-Api-Key", "Cookie"])
def test_secret_names(name):
    assert secret_name(name)


@pytest.mark.parametrize("name", ["MAX_TOKENS", "VLLM_MAX_TOKENS", "TOKENIZERS_PARALLELISM", "--n-predict", "-n",
                                  "--top-k", "--enable-prompt-tokens-details", "--return-tokens-as-token-ids",
                                  "--max-num-batched-tokens", "--override-kv", "--cache-type-k", "--keep", "BYPASS",
                                  "HF_TOKEN_PATH", "CUDA_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "ORACLE_MARKER",
                                  "--metrics", "--port", "NO_PROXY", "Content-Type", "--alias"])
def test_names_that_are_not_secret(name):
    assert not secret_name(name)


@pytest.mark.parametrize("command, expected", [
    # NAME=VALUE prefix assignments, `env`, `export`, quoted values
    ("HF_TOKEN=hf_abc vllm serve m", "HF_TOKEN=*** vllm serve m"),
    ("env VLLM_API_KEY=sk-2 vllm serve m --port {port}", "env VLLM_API_KEY=*** vllm serve m --port {port}"),
    ("export DB_PASSWORD='a b';exec llama-server -m m", "export DB_PASSWORD=***;exec llama-server -m m"),
    ('A_TOKEN="x\\"y" B=1 cmd', "A_TOKEN=*** B=1 cmd"),
    ("docker run -e HF_TOKEN=t1 img", "docker run -e HF_TOKEN=*** img"),
    # flag values, with a space or =
    ("vllm serve m --api-key sk-123 --port {port} --hf-token=abc --dtype float16",
     "vllm serve m --api-key *** --port {port} --hf-token=*** --dtype float16"),
    ("llama-server -hft hf_1 --password pw --token t -m m", "llama-server -hft *** --password *** --token *** -m m"),
    # headers: the name stays
    ('curl -H "Authorization: Bearer abc123" x', "curl -H 'Authorization: ***' x"),
    ("curl --header='X-Api-Key: k9' x", "curl --header='X-Api-Key: ***' x"),
    # URLs with user:password, or a bare token as the user
    ("proxy --upstream http://me:pw@host:8080/v1", "proxy --upstream http://me:***@host:8080/v1"),
    ("git clone https://ghp_tok@github.com/a/b", "git clone https://***@github.com/a/b"),
    # an empty value is still a value; an operator is not
    ("x --api-key '' --port 1; y --token; z", "x --api-key *** --port 1; y --token; z"),
    # an unclosed quote is still redacted
    ("run 'HF_TOKEN=zz", "run HF_TOKEN=***"),
])
def test_redact_command(command, expected):
    assert redact_command(command) == expected


def test_what_is_not_redacted_stays_exactly_as_written():
    cmd = ("MAX_TOKENS=5 ORACLE_MARKER=m exec /x/llama-server -m '/a b/m.gguf' --port {port} -np 1 -c 8192 "
           "--metrics --n-predict 3 --top-k 1 --enable-prompt-tokens-details --return-tokens-as-token-ids "
           "--speculative-config '{\"method\":\"ngram\"}' http://host:1/v1")
    assert redact_command(cmd) == cmd
    assert secret_values(commands=[cmd]) == set()


def test_secret_values_of_every_carrier():
    values = secret_values(commands=["HF_TOKEN=v1 env A_KEY=v2 x --api-key v3 -H 'Authorization: Bearer v4'"],
                           urls=["http://u:p%40ss@h:1", "http://tok5@h"],
                           environ={"VLLM_API_KEY": "v6", "PATH": "/bin", "HTTPS_PROXY": "http://me:v7@p"})
    assert values == {"v1", "v2", "v3", "Bearer v4", "v4", "p%40ss", "p@ss", "tok5", "v6", "v7"}


def test_redact_url_and_free_text():
    assert redact_url("http://u:p@127.0.0.1:8080") == "http://u:***@127.0.0.1:8080"
    assert redact_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
    text = ("GET http://user:passw0rd@127.0.0.1:8/props failed; HF_TOKEN=abc; --api-key=zz; "
            "Authorization: Bearer qq12; def put(key=None): token=1")
    assert redact_text(text) == ("GET http://user:***@127.0.0.1:8/props failed; HF_TOKEN=***; --api-key=***; "
                                 "Authorization: Bearer ***; def put(key=None): token=1")
    assert redact_text("- environment: `HF_TOKEN=x`, `Authorization: y`") == \
        "- environment: `HF_TOKEN=***`, `Authorization: ***`"  # markdown's backticks stay


def test_public_text_hides_remembered_and_environment_values_in_every_written_form(monkeypatch):
    remember_secrets(commands=["llama-server --api-key 'k<e>y\"remembered'"], urls=["http://u:urlsecret99@h"])
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "envsecret77")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # under MIN_SCRUBBED: hidden where assigned, not everywhere
    data = {"log": 'echoed k<e>y"remembered and urlsecret99 and envsecret77, abc'}
    as_json = public_text(json.dumps(data))
    assert json.loads(as_json) == {"log": "echoed *** and *** and ***, abc"}
    as_html = public_text("<td>echoed k&lt;e&gt;y&quot;remembered</td>")
    assert as_html == f"<td>echoed {MASK}</td>"


def test_scrub_file_rewrites_only_what_holds_a_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("LOG_TEST_API_KEY", "logsecret1234")
    log = tmp_path / "server-boot1.log"
    log.write_bytes(b"main: key logsecret1234 \xff raw byte\n")
    clean = tmp_path / "clean.log"
    clean.write_text("nothing here\n")
    before = clean.stat().st_mtime_ns
    scrub_file(log)
    scrub_file(clean)
    scrub_file(tmp_path / "missing.log")
    assert log.read_bytes() == b"main: key *** \xff raw byte\n"
    assert clean.stat().st_mtime_ns == before



def test_scrub_file_on_a_full_disk_leaves_no_secret_and_raises_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("LOG_TEST_API_KEY", "logsecret1234")
    log = tmp_path / "server-boot1.log"
    log.write_bytes(b"main: loading\n" * 200 + b"main: key logsecret1234\n")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    # Writes past 1 KB fail with EFBIG (Python ignores SIGXFSZ), as on a disk that takes nothing more.
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))
    try:
        scrub_file(log)  # the stop of a server whose log echoed a key, on a full disk: no OSError
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert log.read_bytes() == (b"main: loading\n" * 200)[:1024]  # the clean text as far as the disk took it
    assert not list(tmp_path.glob("*.scrubbing"))

def test_public_stream_writes_what_is_public(monkeypatch):
    monkeypatch.setenv("STREAM_TEST_TOKEN", "streamsecret42")
    out = io.StringIO()
    stream = PublicStream(out)
    stream.write("failed: streamsecret42 at http://a:b@c\n")
    stream.flush()
    assert out.getvalue() == "failed: *** at http://a:***@c\n"
