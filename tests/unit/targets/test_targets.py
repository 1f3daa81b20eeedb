"""Targets: which kind a set of options makes, and the context an embedded server is planned with."""

from oracle.targets import make_target, planned_context
from oracle.targets.embedded import EMBEDDED_CTX
from oracle.targets.url import UrlTarget
from oracle.targets.vllm_cpu import MAX_MODEL_LEN


class _Options:
    backend, urls, launch, model, server_args, request_timeout, dtype = "llamacpp", (), None, None, "", 600, "float32"
    launch_timeout = 600


def test_url_and_launch_options_make_their_targets(tmp_path):
    o = _Options()
    o.urls = ("http://127.0.0.1:1", "http://127.0.0.1:2")
    target = make_target(o, worker=1, log_dir=tmp_path)
    assert isinstance(target, UrlTarget) and target.url == "http://127.0.0.1:2" and not target.restartable
    o.urls, o.launch, o.launch_timeout = (), "llama-server --port {port} -a {worker}", 7
    target = make_target(o, worker=3, log_dir=tmp_path)
    assert target.kind == "launch" and target.restartable
    assert target.server.health_timeout_s == 7 and target.log_path is None  # --launch-timeout; not started yet
    assert target.configured_command == "llama-server --port {port} -a 3"


def test_planned_context_comes_from_the_embedded_servers_own_flags(model_path):
    assert planned_context("llamacpp", started_elsewhere=False, server_args="", model=None) == \
        (EMBEDDED_CTX, f"llama-server -c {EMBEDDED_CTX} (embedded default)")
    assert planned_context("llamacpp", started_elsewhere=False, server_args="-c 4096 -np 2", model=str(model_path)) \
        == (2048, "--server-args -c split over -np 2 slots")
    assert planned_context("vllm-cpu", started_elsewhere=False, server_args="", model=None)[0] == MAX_MODEL_LEN
    assert planned_context("vllm-cpu", started_elsewhere=False, server_args="--max-model-len=2048", model=None) == \
        (2048, "--server-args --max-model-len")
    assert planned_context("llamacpp", started_elsewhere=True, server_args="", model=None)[0] == 8192
