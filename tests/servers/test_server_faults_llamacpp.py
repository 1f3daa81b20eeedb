"""Server and protocol faults against the real llama-server: each planted (through the launch command or the fault
proxy), each asserted by its message, its exit code and what is on disk. docs/faults.md lists them."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import NO_WARMUP, gate_argv, launch_line
from proxy import FaultProxy, StreamFault

pytestmark = pytest.mark.slow

USAGE, INTERRUPTED = pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED
RECORDS = ["code-palindrome@boot1-c1"]  # what the tiny suite has finished when its 2nd request fails


def _gone(pid: int) -> bool:
    """The process has exited (absent, or a zombie nobody has reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def _pids_with(marker: str) -> list[int]:
    """Live processes whose environment holds marker (a launched server carries it from its command)."""
    out = []
    for env in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in env.read_bytes() and not _gone(int(env.parent.name)):
                out.append(int(env.parent.name))
        except OSError:
            continue
    return out


def _stopped_midway(result, *, failed: str) -> dict:
    """The run stopped at the 2nd prompt: exit 2, the message, the first record and a partial report on disk."""
    assert result.ret == INTERRUPTED, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines([f"*the run stopped midway: prompt 'code-hashmap' (boot1-c1, request 2 of 3): {failed}"
                                 f"*. The run stops here. No request was retried; 1 finished record(s) of that "
                                 f"condition kept in {result.folder / 'records'}; check the server's log"])
    rep = json.loads((result.folder / "identity.json").read_text())
    assert rep["verdict"] == "partial" and rep["missing"] == ["code-hashmap", "math-derivative"]
    assert list(rep["records"]["finished"]) == RECORDS
    assert sorted(p.name for p in (result.folder / "records" / "boot1-c1").iterdir()) == [
        "code-palindrome.json", "code-palindrome.npz"]
    assert "partial" in (result.folder / "identity.md").read_text().splitlines()[0].lower()
    result.stdout.fnmatch_lines(["*= 1 passed, 4 not-run in *"])
    return rep


# -- the server does not come up -----------------------------------------------------------------------------


def test_a_server_that_exits_at_once_is_named_within_seconds_with_the_last_20_lines_of_its_log(gate_run):
    lines = "; ".join(f"echo log line {i}" for i in range(1, 31))
    started = time.monotonic()
    result = gate_run(f"--launch=: {{port}}; {lines}; exit 3", report="exits")  # {port} taken, never bound
    assert time.monotonic() - started < 20
    assert result.ret == USAGE
    log = result.folder / "server-boot1.log"
    result.stderr.fnmatch_lines(["*oracle could not start the target: the server exited with code 3 before it was "
                                 "healthy; fix what its log says, or run the command by hand to see it fail;*",
                                 f"last 20 lines of {log}:", *(f"  log line {i}" for i in range(11, 31))])
    assert "log line 10\n" not in result.stderr.str()
    rep = json.loads((result.folder / "identity.json").read_text())
    assert rep["verdict"] == "partial" and rep["interruption"].startswith(
        "refused before any request: oracle could not start the target: the server exited with code 3")
    assert log.read_text().splitlines()[-1] == "log line 30" and not (result.folder / "records").exists()


def test_a_real_llama_server_that_cannot_load_its_model_is_named_with_its_log(gate_run, llama_tools, tmp_path):
    broken = tmp_path / "not-a-model.gguf"
    broken.write_bytes(b"GGUF but not really")
    result = gate_run(f"--launch={launch_line(llama_tools, broken)}", report="nomodel")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(["*the server exited with code 1 before it was healthy*",
                                 f"last * lines of {result.folder / 'server-boot1.log'}:", "*failed to load model*"])
    assert json.loads((result.folder / "identity.json").read_text())["verdict"] == "partial"


def test_a_port_in_use_is_named(gate_run, llama_tools, model_path):
    with socket.socket() as holder:  # another process's listening socket on the server's port
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        command = launch_line(llama_tools, model_path).replace("{port}", str(port))
        # {port} is required: here a wrapper takes it and the server binds a fixed port (the fault planted).
        result = gate_run(f"--launch=: {{port}}; {command}", report="port")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(["*the server could not bind its port *: the port is in use by another process "
                                 "(the server exited with code 1 before it was healthy); put {port} in the command "
                                 "where the port goes, so that oracle picks a free one, or stop what holds the port;*",
                                 f"*couldn't bind HTTP server socket, hostname: 127.0.0.1, port: {port}*"])
    assert "the port is in use" in json.loads((result.folder / "identity.json").read_text())["interruption"]


def test_a_server_that_never_becomes_healthy_is_stopped_after_the_launch_timeout(gate_run):
    # It accepts connections on its port and never answers one: the health check times out again and again.
    hang = ("import os, socket, time; s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); "
            "print('pid', os.getpid(), flush=True); time.sleep(600)")
    started = time.monotonic()
    result = gate_run(f"--launch={sys.executable} -c \"{hang}\"", "--launch-timeout=4", report="unhealthy")
    assert 4 <= time.monotonic() - started < 30
    assert result.ret == USAGE
    log = result.folder / "server-boot1.log"
    result.stderr.fnmatch_lines(["*oracle could not start the target: the server was not healthy within 4 s "
                                 "(--launch-timeout 4) and was stopped; a server that loads slowly needs a longer "
                                 "--launch-timeout S, one that never answers GET /health needs its command fixed;*",
                                 f"last 1 lines of {log}:", "  pid *"])
    pid = int(log.read_text().split()[1])
    assert _gone(pid)
    assert json.loads((result.folder / "identity.json").read_text())["interruption"].startswith(
        "refused before any request: oracle could not start the target: the server was not healthy within 4 s")


# -- the server fails a generation ---------------------------------------------------------------------------


@pytest.mark.parametrize("status, body, said", [
    (500, {"error": {"code": 500, "message": "planted: out of memory", "type": "server_error"}},
     "the server answered HTTP 500 on POST /completion (the server failed): planted: out of memory (server_error)"),
    (400, {"error": {"code": 400, "message": "planted: the request exceeds the available context size",
                     "type": "exceed_context_size_error"}},
     "the server answered HTTP 400 on POST /completion (the request was refused): planted: the request exceeds the "
     "available context size (exceed_context_size_error)"),
], ids=["http500", "http400"])
def test_an_http_error_on_a_generation_stops_the_run_quoting_the_server(gate_run, shared_server, status, body, said):
    with FaultProxy(shared_server.url, answer_status={2: (status, json.dumps(body).encode())}) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", report=f"http{status}")
    rep = _stopped_midway(result, failed=said)
    assert said in rep["interruption"]
    assert proxy.completions == 2  # nothing was retried


@pytest.mark.parametrize("kind, said", [
    ("error-event", "the server sent an error inside the stream of POST /completion after 3 tokens: planted: the slot "
                    "crashed (server_error)"),
    ("malformed", "the server sent a malformed stream event on POST /completion after 3 tokens: not JSON "
                  "(Expecting value: line 1 column 17 (char 16)): b'{\"tokens\": [42, '"),
    ("non-utf8", "the server sent a malformed stream event on POST /completion after 3 tokens: bytes that are not "
                 "UTF-8 (invalid start byte at byte 13): b'{\"content\": \"\\xff\\xfe\", *"),
    # The proxy answers in HTTP/1.0 framing (the body ends where the connection does): there a TCP reset ends the
    # body as a close would for aiohttp's parser, and the run stops on the final message that never came. A reset
    # inside a chunked body, as llama-server frames its streams, is the "connection broke" ReadError
    # (tests/unit/backends/test_http_stream.py::test_a_tcp_reset_inside_a_chunked_stream_is_a_read_error).
    ("reset", "POST /completion: the stream ended without its final message after 3 tokens (server died or "
              "connection cut)"),
], ids=["error-event", "malformed", "non-utf8", "reset"])
def test_a_broken_stream_stops_the_run_naming_what_the_server_sent(gate_run, shared_server, kind, said):
    with FaultProxy(shared_server.url, stream_fault=StreamFault(request_index=2, after_events=3, kind=kind)) as proxy:
        result = gate_run(*NO_WARMUP, f"--oracle-url={proxy.url}", report=kind)
    _stopped_midway(result, failed=said)
    assert proxy.completions == 2  # nothing was retried


# -- Ctrl-C, and a killed gate ---------------------------------------------------------------------------------


def _gate_process(tmp_path, tiny_suite, launch: str, report: Path) -> subprocess.Popen:
    """The gate as a real pytest process (as a user runs it), launching its own llama-server."""
    cmd = gate_argv(f"--launch={launch}", f"--oracle-suite={tiny_suite}", "--max-tokens=200", f"--report-dir={report}",
                    "--rootdir", str(tmp_path), "--canaries=none", *NO_WARMUP)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                       os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def _first_record(gate: subprocess.Popen, report: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not list((report / "records" / "boot1-c1").glob("*.json")):
        assert gate.poll() is None, gate.communicate()[0]
        time.sleep(0.05)


def test_ctrl_c_mid_run_keeps_the_records_writes_a_partial_report_and_stops_the_server(tmp_path, tiny_suite,
                                                                                      llama_tools, model_path):
    marker = f"ORACLE_FAULT_MARK={uuid.uuid4().hex}"
    report = tmp_path / "interrupted"
    gate = _gate_process(tmp_path, tiny_suite, f"{marker} {launch_line(llama_tools, model_path)}", report)
    _first_record(gate, report)
    servers = _pids_with(marker)
    assert len(servers) == 1  # the launched llama-server (its shell does not carry the marker)
    gate.send_signal(signal.SIGINT)
    out, _ = gate.communicate(timeout=120)
    assert gate.returncode == INTERRUPTED, out
    assert "KeyboardInterrupt" in out
    assert f"oracle: the run stopped midway: interrupted (Ctrl-C); every record finished before it is kept under " \
           f"{report}; no request was retried" in out
    rep = json.loads((report / "identity.json").read_text())
    assert rep["verdict"] == "partial" and rep["interruption"].startswith("interrupted (Ctrl-C)")
    on_disk = sorted(p.stem for p in (report / "records" / "boot1-c1").glob("*.json"))
    assert on_disk and sorted(k.split("@")[0] for k in rep["records"]["finished"]) == on_disk
    for pid in on_disk:
        assert (report / "records" / "boot1-c1" / f"{pid}.npz").is_file()
    assert "partial" in (report / "identity.md").read_text().splitlines()[0].lower()
    assert _gone(servers[0]) and _pids_with(marker) == []


def test_a_killed_gate_takes_its_launched_server_with_it(tmp_path, tiny_suite, llama_tools, model_path):
    """SIGKILL leaves oracle no time to stop anything: the launch shell gets the parent-death signal and takes its
    process group (the llama-server it started) down with it."""
    marker = f"ORACLE_FAULT_MARK={uuid.uuid4().hex}"
    report = tmp_path / "killed"
    gate = _gate_process(tmp_path, tiny_suite, f"{marker} {launch_line(llama_tools, model_path)}", report)
    _first_record(gate, report)
    servers = _pids_with(marker)
    assert len(servers) == 1
    gate.kill()
    gate.communicate(timeout=60)
    deadline = time.monotonic() + 20
    while _pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _pids_with(marker) == [] and _gone(servers[0])
    # Killed between two writes, the report may lag one record behind the disk, never ahead of it.
    finished = {p.stem for p in (report / "records" / "boot1-c1").glob("*.json")}
    listed = {k.split("@")[0] for k in json.loads((report / "identity.json").read_text())["records"]["finished"]}
    assert finished and listed <= finished
