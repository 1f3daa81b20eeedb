"""Targets: the server under test (a URL, a launched command, the embedded defaults, or an in-process model).

    target = make_target(options, worker=0, log_dir=report_dir)
    backend = target.up()

Everything oracle knows about a target without asking it lives here, e.g. the context an
embedded server is started with (`planned_context`), so that items are planned from options alone.
"""

from __future__ import annotations

from pathlib import Path

from oracle.backends import is_in_process, parse_backend
from oracle.targets.base import Target, TargetError
from oracle.targets.cache import EmbeddedError, default_model
from oracle.targets.in_process import InProcessTarget
from oracle.targets.launched import LaunchedTarget
from oracle.targets.url import UrlTarget

__all__ = ["Target", "TargetError", "make_target", "planned_context"]

UNKNOWN_CONTEXT = 8192  # assumed for a --url or --launch target unless --context says


def make_target(options, *, worker: int, log_dir: Path) -> Target:
    """--url (entry `worker` of the list), --launch, the hf model in process, or the family's embedded default."""
    if is_in_process(options.backend):
        return InProcessTarget(options.backend, options.model, dtype=options.dtype,
                              ov_config=dict(options.ov_config) or None)
    if options.urls:
        return UrlTarget(options.backend, options.urls[worker], timeout_s=options.request_timeout)
    if options.launch:
        return LaunchedTarget(options.backend, options.launch, kind="launch", log_dir=log_dir, env=None,
                              worker=worker, timeout_s=options.request_timeout,
                              launch_timeout_s=options.launch_timeout)
    from oracle.targets.embedded import embedded_target

    spec = parse_backend(options.backend)
    try:
        embedded = embedded_target(spec.family, spec.platform, options.model, options.server_args)
    except (ValueError, EmbeddedError) as exc:
        raise TargetError(f"--backend {options.backend}: {exc}") from None
    return LaunchedTarget(options.backend, embedded.command, kind="embedded", log_dir=log_dir, env=embedded.env,
                          worker=worker, timeout_s=options.request_timeout, model_path=embedded.model,
                          launch_timeout_s=options.launch_timeout)


def planned_context(backend: str, *, started_elsewhere: bool, server_args: str, model: str | None) -> tuple[int, str]:
    """(context length, where it came from) without asking the server: what the embedded default is started with.
    started_elsewhere: a --url / --servers / --launch target, whose flags oracle does not read."""
    if started_elsewhere:
        return UNKNOWN_CONTEXT, f"default {UNKNOWN_CONTEXT} (give --context N for a --url or --launch target)"
    if parse_backend(backend).family == "vllm":
        from oracle.targets.vllm_cpu import planned_context as vllm_context

        return vllm_context(server_args)
    from oracle.targets.embedded import planned_context as llama_context

    return llama_context(server_args, Path(model) if model else default_model())
