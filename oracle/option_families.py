"""The cross-checks of oracle's options that read the backend family's descriptor (`oracle.backends.FAMILIES`):
what an in-process family cannot honour, the --oracle-model it needs, and the --runner-arg only a family with a locator
(python's MODULE:FACTORY) takes. Each raises pytest.UsageError naming the fix.

    check_family_options(config.option, urls)
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["check_family_options"]


def check_family_options(o, urls: tuple[str, ...]) -> None:
    from oracle.backends import family_of

    family = family_of(o.backend)
    if family.in_process:
        if urls or o.launch:
            raise pytest.UsageError(f"--backend {o.backend} runs the model in this process: give --oracle-model (a GGUF "
                                    "or a Hugging Face model folder) instead of --oracle-url / --launch")
        caps = family.capabilities
        asked = (("--boots", o.boots > 1, caps.restartable), ("--ladder", bool(o.ladder), caps.concurrent),
                 ("--server-args", bool(o.server_args), False))
        refused = [flag for flag, used, offered in asked if used and not offered]
        if refused:
            raise pytest.UsageError(f"--backend {o.backend} runs in this process and cannot honour "
                                    f"{', '.join(refused)} (no server to restart, requests run one at a time, "
                                    "no server flags); drop them")
        if o.oracle_model and not Path(o.oracle_model).exists():
            raise pytest.UsageError(f"--oracle-model {o.oracle_model}: no such file or folder; give a GGUF or a Hugging Face "
                                    "model folder")
    elif o.oracle_model and not Path(o.oracle_model).is_file():
        raise pytest.UsageError(f"--oracle-model {o.oracle_model}: no such file; give the path of a GGUF model")
    _check_load_options(o, family)
    _check_localize(o, family)
    if o.runner_arg and not family.locator:
        raise pytest.UsageError(f"--runner-arg is for --backend=python:MODULE:FACTORY (the runner's factory); "
                                f"--backend {o.backend} takes none: drop it")


def _check_localize(o, family) -> None:
    """--localize reads layers, which only a model loaded in this process shows, on a split against a reference."""
    if not o.localize:
        return
    if not family.in_process:
        from oracle.backends import FAMILIES

        shown = ", ".join(d.name for d in FAMILIES.values() if d.in_process)
        raise pytest.UsageError(f"--localize: --backend {o.backend} talks to a server over HTTP, which shows no "
                                f"layers; gate the same weights with an in-process family ({shown}), e.g. "
                                "--backend=hf-cpu --oracle-model MODEL --dtype float16 --reference REF --localize "
                                "(docs/localize.md)")
    if not o.reference:
        raise pytest.UsageError("--localize: no --reference; it localizes a gate's split against its reference: "
                                "record one first (--record REF), then gate with --reference REF --localize")


def _check_load_options(o, family) -> None:
    """--dtype, --ov-config and --floor-dtype configure one family's in-process load: given to another, they would
    be ignored without a word."""
    from oracle.backends import FAMILIES

    given = [flag for flag, used in (("--dtype", o.dtype is not None), ("--ov-config", bool(o.ov_config)))
             if used and flag not in family.load_options]
    for flag in given:
        takers = sorted(name for name, f in FAMILIES.items() if flag in f.load_options)
        raise pytest.UsageError(f"{flag} means nothing for --backend {o.backend}: only --backend "
                                f"{' or '.join(takers)} loads the model with it (a server's own settings go in its "
                                "command); drop it")
    if o.floor_dtype not in (None, "none") and not family.capabilities.precision_floor:  # none: nothing asked
        takers = sorted(name for name, f in FAMILIES.items() if f.capabilities.precision_floor)
        raise pytest.UsageError(f"--floor-dtype means nothing for --backend {o.backend}: only --backend "
                                f"{' or '.join(takers)} reloads the same weights in another dtype for a precision "
                                "floor; drop it")
