"""The cross-checks of the gate's options that read the backend family's descriptor: what an in-process family
cannot honour, the --oracle-model it needs, a family's options given to another family (each family's options
module says so in its words), --floor-dtype and --localize. Each raises pytest.UsageError naming the fix; the
values come read (oracle/gate/options.py), the family options from their own modules.

    check_family_options(option, family, given)
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from oracle.backends.options import foreign_options_refusal

__all__ = ["check_family_options"]


def check_family_options(option, family, given: SimpleNamespace) -> None:
    """`option`: the raw options (each family's options module reads its own there); `given`: the core values
    read (backend, urls, launch, server_args, model, localize, reference, floor_dtype)."""
    g = given
    if family.in_process:
        if g.urls or g.launch:
            raise pytest.UsageError(f"--backend {g.backend} runs the model in this process: give --oracle-model (a "
                                    "GGUF or a Hugging Face model folder) instead of --oracle-url / --launch")
        if g.server_args:
            raise pytest.UsageError(f"--backend {g.backend} runs in this process and cannot honour --server-args "
                                    "(no server flags); drop it")
        if g.model and not Path(g.model).exists():
            raise pytest.UsageError(f"--oracle-model {g.model}: no such file or folder; give a GGUF or a Hugging "
                                    "Face model folder")
    elif g.model and not Path(g.model).is_file():
        raise pytest.UsageError(f"--oracle-model {g.model}: no such file; give the path of a GGUF model")
    refusal = foreign_options_refusal(option, family, g.backend)
    if refusal:
        raise pytest.UsageError(refusal)
    if g.floor_dtype not in (None, "none") and not family.capabilities.precision_floor:  # none: nothing asked
        from oracle.backends import FAMILIES

        takers = sorted(name for name, f in FAMILIES.items() if f.capabilities.precision_floor)
        raise pytest.UsageError(f"--floor-dtype means nothing for --backend {g.backend}: only --backend "
                                f"{' or '.join(takers)} reloads the same weights in another dtype for a precision "
                                "floor; drop it")
    _check_localize(g, family)


def _check_localize(g, family) -> None:
    """--localize reads layers, which only a model loaded in this process shows, on a split against a reference."""
    if not g.localize:
        return
    # llamacpp shows its layers through its own tool, run on the embedded server's model and flags alone
    if not family.in_process and family.layers and (g.urls or g.launch):
        raise pytest.UsageError(f"--localize: --backend {g.backend} at --oracle-url / --launch: oracle knows neither "
                                "that server's model file nor its flags, which llama.cpp's own layer tool needs; gate "
                                "the embedded server (no --oracle-url or --launch; its flags in --server-args), or "
                                "localize the same weights in process (docs/localize.md)")
    if not family.in_process and not family.layers:
        from oracle.backends import FAMILIES

        shown = ", ".join(d.name for d in FAMILIES.values() if d.in_process)
        raise pytest.UsageError(f"--localize: --backend {g.backend} talks to a server over HTTP, which shows no "
                                f"layers; gate the same weights with an in-process family ({shown}), e.g. "
                                "--backend=hf-cpu --oracle-model MODEL --dtype float16 --reference REF --localize "
                                "(docs/localize.md)")
    if not g.reference:
        raise pytest.UsageError("--localize: no --reference; it localizes a gate's split against its reference: "
                                "record one first (--record REF), then gate with --reference REF --localize")
