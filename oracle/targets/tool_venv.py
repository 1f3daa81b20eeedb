"""A tool's own venv in the user cache dir, apart from the project's environment (vLLM CPU, the OpenVINO export).

Such a tool pins packages that conflict with the project's (vLLM its torch and transformers, optimum-intel a
transformers < 5.6), so it gets a venv of its own, built once from PyPI and marked ready:

    python = tool_venv(root, ("optimum-intel==2.2.0", ...), what="the OpenVINO export", log=print)
"""

from __future__ import annotations

import os
import shlex
import subprocess
import venv
from collections.abc import Callable
from pathlib import Path

from oracle.targets.cache import EmbeddedError, build_lock

__all__ = ["CUDA_EXTRAS", "READY", "clean_env", "tool_venv"]

READY = ".oracle-ready"
# pip brings CUDA builds of these with vLLM's and optimum's dependencies; they break transformers' imports on
# the CPU torch.
CUDA_EXTRAS = ("torchvision", "torchaudio", "torchcodec")


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for a tool venv's pip and interpreter: the project's venv must not leak into it."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    return dict(env, **extra)


def tool_venv(root: Path, requirements: tuple[str, ...], *, what: str, fix: str, stamp: str, log=print,
              check: Callable[[Path], None] | None = None) -> Path:
    """The python of the venv at `root` holding `requirements`: built on first use, and once `check(python)` has
    passed (it raises EmbeddedError otherwise), marked ready with `stamp` and reused after. `fix` says what the
    user can do instead when pip cannot build it."""
    python = root / "bin" / "python"
    if _ready(root, stamp):
        return python
    with build_lock(root):  # another run building it now: wait, then take what it built
        if _ready(root, stamp):
            return python
        return _build(root, python, requirements, what=what, fix=fix, stamp=stamp, log=log, check=check)


def _ready(root: Path, stamp: str) -> bool:
    ready = root / READY
    return ready.is_file() and ready.read_text().strip() == stamp and (root / "bin" / "python").exists()


def _build(root: Path, python: Path, requirements: tuple[str, ...], *, what: str, fix: str, stamp: str, log,
           check: Callable[[Path], None] | None) -> Path:
    log(f"oracle: building the venv of {what} in {root} (once)")
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    pip = [str(python), "-m", "pip", "install", "--quiet", *requirements]
    r = subprocess.run(pip, capture_output=True, text=True, env=clean_env())
    if r.returncode != 0:
        raise EmbeddedError(f"`{shlex.join(pip)}` failed:\n{r.stderr[-2000:]}\n{what} needs PyPI; {fix}")
    subprocess.run([str(python), "-m", "pip", "uninstall", "--quiet", "-y", *CUDA_EXTRAS],
                   capture_output=True, text=True, env=clean_env())
    if check is not None:
        check(python)
    (root / READY).write_text(stamp + "\n")
    return python
