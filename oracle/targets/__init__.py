"""Targets: the server under test (a URL, a launched command, the embedded defaults, or an in-process model).

    target = make_target(options, worker=0, log_dir=report_dir)
    backend = target.up()

Everything oracle knows about a target without asking it lives here, e.g. the context an
embedded server is started with (`planned_context`), so that items are planned from options alone.
"""

from __future__ import annotations

from pathlib import Path

from oracle.backends import family_of, parse_backend
from oracle.targets.base import Target, TargetError
from oracle.targets.cache import EmbeddedError
from oracle.targets.families import FAMILY_TARGETS, target_of
from oracle.targets.in_process import InProcessTarget
from oracle.targets.launched import LaunchedTarget
from oracle.targets.url import UrlTarget

__all__ = ["Target", "TargetError", "make_target", "planned_context"]

UNKNOWN_CONTEXT = 8192  # assumed for a --oracle-url or --launch target unless --oracle-context says


def make_target(options, *, worker: int, log_dir: Path) -> Target:
    """--oracle-url (entry `worker` of the list), --launch, the model in process, or the family's embedded server."""
    family = family_of(options.backend)
    if family.in_process:
        return InProcessTarget(options.backend, options.model, settings=dict(options.family_settings))
    if options.urls:
        return UrlTarget(options.backend, options.urls[worker], timeout_s=options.request_timeout)
    if options.launch:
        return LaunchedTarget(options.backend, options.launch, kind="launch", log_dir=log_dir, env=None,
                              worker=worker, timeout_s=options.request_timeout,
                              launch_timeout_s=options.launch_timeout)
    server = target_of(options.backend).embedded
    if server is None or not server.serves(parse_backend(options.backend).platform):
        labels = [t.embedded.label for t in FAMILY_TARGETS.values() if t.embedded]
        labels = " and ".join([", ".join(labels[:-1]), labels[-1]] if len(labels) > 1 else labels)
        raise TargetError(f"--backend {options.backend}: no embedded server for this backend; give --oracle-url of "
                          f"a running server or --launch CMD (the embedded defaults are {labels})")
    try:
        embedded = server.start(options.model, options.server_args)
    except (ValueError, EmbeddedError) as exc:
        raise TargetError(f"--backend {options.backend}: {exc}") from None
    return LaunchedTarget(options.backend, embedded.command, kind="embedded", log_dir=log_dir, env=embedded.env,
                          worker=worker, timeout_s=options.request_timeout, model_path=embedded.model,
                          launch_timeout_s=options.launch_timeout)


def planned_context(backend: str, *, started_elsewhere: bool, server_args: str, model: str | None) -> tuple[int, str]:
    """(context length, where it came from) without asking the server: what the target oracle starts itself
    is started with (the family's `planned_context` in `targets.families`). started_elsewhere: a --oracle-url /
    --servers / --launch target, whose flags oracle does not read."""
    plan = target_of(backend).planned_context
    if started_elsewhere or plan is None:
        return UNKNOWN_CONTEXT, f"default {UNKNOWN_CONTEXT} (give --oracle-context N for a --oracle-url or --launch target)"
    return plan(model, server_args)
