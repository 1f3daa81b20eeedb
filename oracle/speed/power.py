"""Power, thermals and isolation over a timed window (`--oracle-power auto|off`): which meters fit the run's device, a
sampler that reads them every second, and the card's `power` and `isolation` blocks.

    window = PowerWindow.open("auto", identity, url=backend.base_url, in_process=False)
    window.start(); ...the timed run...; power, isolation = window.stop(generated_tokens=312)

The device is read from the run's identity (`store/identity.accelerator_identity`): an NVIDIA GPU (nvidia-smi in
it) is metered by NVML, an Intel GPU (xpu-smi in it, or the xe driver loaded) by its hwmon `energy1_input`, anything
else is a CPU run metered by RAPL. `chosen` says which and why; a meter that cannot read says "not available: ...".
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time

from oracle.speed.energy import Unavailable, intel_gpu_meters, pci_address, rapl_meter
from oracle.speed.host import HostWindow, host_words
from oracle.speed.isolation import (CpuWindow, ServerProcesses, gpu_others, isolation_block, name_processes,
                                    oracle_processes, xpu_smi_processes)
from oracle.speed.nvml import (NvmlMeter, load_nvml, nvidia_smi_processes, nvml_device_count,
                               nvml_process_utilization, nvml_processes, query_nvidia_smi)

__all__ = ["SAMPLE_S", "PowerWindow", "choose_device", "device_name", "power_block"]

SAMPLE_S = 1.0  # the sampler's period: counters, temperatures, clocks, NVML's process list
TICK_S = 0.25  # how often the server's connections are followed to an upstream server (a proxy's)
CPU, NVIDIA, INTEL_GPU = "cpu", "nvidia", "intel-gpu"
SOURCES = {CPU: "rapl", NVIDIA: "nvml", INTEL_GPU: "intel-gpu-hwmon"}  # each device's meter


def choose_device(accelerator: dict | None) -> tuple[str, str]:
    """(device, why) from the run's accelerator identity."""
    accel = accelerator or {}
    if accel.get("nvidia-smi"):
        return NVIDIA, "NVML: the run's accelerator is an NVIDIA GPU (nvidia-smi in the identity)"
    modules = accel.get("kernel_modules") or {}
    if accel.get("xpu-smi") or "xe" in modules:
        return INTEL_GPU, ("hwmon energy1_input: the run's accelerator is an Intel GPU ("
                           + ("xpu-smi" if accel.get("xpu-smi") else "the xe driver") + " in the identity)")
    return CPU, "RAPL: the run's accelerator is the CPU (no GPU in the identity)"


def device_name(device: str, accelerator: dict | None) -> str:
    """The device as its model where the identity names it: nvidia-smi's `name` ('NVIDIA H100 80GB HBM3'), else
    the kind's words ('NVIDIA GPU', 'Intel GPU', 'CPU')."""
    if device == NVIDIA:
        first = ((accelerator or {}).get("nvidia-smi") or "").strip().splitlines()
        name = first[0].split(",")[0].strip() if first else ""
        return name or "NVIDIA GPU"
    return {INTEL_GPU: "Intel GPU", CPU: "CPU"}.get(device, device)


def power_block(mode: str, device: str, chosen: str, readings: list[dict], generated_tokens: int) -> dict:
    """speed.power: every meter's reading, their sum, and the energy per generated token (prefill included)."""
    ok = [r for r in readings if r.get("available")]
    out = {"mode": mode, "device": device, "chosen": chosen, "meters": readings, "generated_tokens": generated_tokens,
           "joules": None, "watts_mean": None, "window_s": None, "joules_per_token": None}
    if not ok:
        out["reason"] = readings[0]["reason"] if readings else "not available: no meter"
        return out
    joules = sum(r["joules"] for r in ok)
    window = max(r["window_s"] for r in ok)
    out.update(joules=round(joules, 3), window_s=window, watts_mean=round(joules / window, 3) if window else None,
               joules_per_token=round(joules / generated_tokens, 4) if generated_tokens else None)
    return out


class PowerWindow:
    """The meters and the isolation probe of one timed window, sampled every SAMPLE_S seconds by a thread."""

    def __init__(self, mode: str, device: str, chosen: str, meters: list, *, server: ServerProcesses | None,
                 oracle: set[int], nv=None) -> None:
        self.mode, self.device, self.chosen, self.meters = mode, device, chosen, meters
        self.servers, self.oracle, self.nv = server, oracle, nv
        self.cpu = CpuWindow(exclude=oracle) if device == CPU and server is not None and server.local else None
        self.host = HostWindow() if self.cpu is not None else None  # the kernel's totals: short-lived processes
        self.gpu_seen: dict[tuple, dict] = {}  # (pid, GPU) -> the process seen there
        self.nv_since: dict[int, int] = {}  # GPU index -> the last utilization sample read (microseconds)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.name = device_name(device, None)  # the device's model, set from the identity by `open`
        self._t0: float | None = None  # the window's start (monotonic): every isolation block states its window

    @classmethod
    def open(cls, mode: str, identity: dict, *, url: str | None, in_process: bool) -> "PowerWindow":
        device, chosen = choose_device(identity.get("accelerator"))
        name = device_name(device, identity.get("accelerator"))
        if mode == "off":
            window = cls(mode, device, chosen, [], server=None, oracle=set())
            window.name = name
            return window
        oracle = oracle_processes()
        servers = ServerProcesses(url, in_process=in_process, oracle=oracle)
        if in_process:
            oracle = oracle - servers.pids
        server = servers.pids
        nv = None
        if not servers.local:
            meters: list = [Unavailable(SOURCES[device], servers.found)]
        elif device == NVIDIA:
            nv, why = load_nvml()
            meters = [Unavailable("nvml", why)] if nv is None else []
            if nv is not None:
                procs = nvml_processes(nv)
                gpus = sorted({p["gpu"] for p in procs if p["pid"] in server}) or sorted({p["gpu"] for p in procs})
                gpus = gpus or list(range(nvml_device_count(nv)))
                meters = [NvmlMeter(nv, i) for i in gpus]
        elif device == INTEL_GPU:
            meters = list(intel_gpu_meters(pci_address(identity.get("accelerator"))))
        else:
            meters = [rapl_meter()]
        window = cls(mode, device, chosen, meters, server=servers, oracle=oracle, nv=nv)
        window.name = name
        return window

    def start(self) -> None:
        if self.mode == "off":
            return
        self._t0 = time.monotonic()
        for m in self.meters:
            m.start()
        if self.cpu is not None:
            self.cpu.start()
            self.host.start(self.cpu.before)
        if self.nv is not None:  # only the utilization samples of the window count
            self.nv_since = {i: int(time.time() * 1e6) for i in range(nvml_device_count(self.nv))}
        self._gpu_processes()
        self._thread = threading.Thread(target=self._run, name="oracle-power-sampler", daemon=True)
        self._thread.start()

    @property
    def server(self) -> set[int]:
        return self.servers.pids if self.servers is not None else set()

    def _run(self) -> None:
        ticks = 0
        while not self._stop.wait(TICK_S):
            ticks += 1
            self.servers.follow()
            if ticks % round(SAMPLE_S / TICK_S):
                continue
            for m in self.meters:
                m.sample()
            if self.nv is not None:
                self._gpu_processes()

    def _gpu_processes(self) -> None:
        """The GPU's compute processes now, added to those seen in the window (by pid and GPU)."""
        if self.device == NVIDIA and self.servers.local:
            if self.nv is not None:
                procs = nvml_processes(self.nv)
            else:
                text = query_nvidia_smi()
                procs = nvidia_smi_processes(text) if text is not None else []
        elif self.device == INTEL_GPU and self.servers.local and shutil.which("xpu-smi"):
            try:
                done = subprocess.run(["xpu-smi", "ps"], capture_output=True, text=True, timeout=10)
                procs = xpu_smi_processes(done.stdout)
            except (OSError, subprocess.TimeoutExpired):
                procs = []
        else:
            return
        for p in procs:
            self.gpu_seen.setdefault((p["pid"], p.get("pci") or p.get("gpu")), p)
        if self.device == NVIDIA and self.nv is not None:  # sampled over the window: short GPU jobs too
            for s in nvml_process_utilization(self.nv, self.nv_since):
                seen = self.gpu_seen.setdefault((s["pid"], s["pci"]), {
                    "pid": s["pid"], "gpu": s["gpu"], "pci": s["pci"], "source": s["source"], "gpu_memory_mib": None})
                seen["sm_util_max"] = max(seen.get("sm_util_max") or 0, s["sm_util"])

    def close(self) -> None:
        """Stop the sampler (a run that stopped midway: nothing to report)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def stop(self, generated_tokens: int) -> tuple[dict, dict]:
        """(speed.power, speed.isolation) of the window."""
        if self.mode == "off":
            return ({"mode": "off", "device": self.device, "reason": "not measured: --oracle-power off"},
                    isolation_block(device=self.device, method="--oracle-power off", others=None, window_s=None,
                                    excluded={}, reason="--oracle-power off"))
        self.close()
        self.servers.follow()
        readings = [m.stop() for m in self.meters]
        self._gpu_processes()
        power = power_block(self.mode, self.device, self.chosen, readings, generated_tokens)
        return power, self._isolation()

    def _isolation(self) -> dict:
        block = self._isolation_block()
        if self.device != CPU:  # a CPU run keeps its kind's word ("cpu"), as its words always read
            block["device_name"] = self.name
        return block

    def _isolation_block(self) -> dict:
        found = self.servers.found
        window_s = time.monotonic() - self._t0 if self._t0 is not None else None
        excluded = {"server": sorted(self.server), "server_found": found, "oracle": sorted(self.oracle)}
        if not self.server:
            return isolation_block(device=self.device, method="-", others=None, window_s=window_s, excluded=excluded,
                                   reason=found if not found.endswith("(a proxy inside it)") else
                                   f"{found}, and no server it forwards to was seen")
        if self.device == CPU:
            others = self.cpu.stop(self.server)
            host = self.host.stop(self.server | self.oracle, self.cpu.after)
            method = "/proc/PID/stat CPU time over the window" + ("; " + host["method"] if host else "")
            return isolation_block(device=CPU, method=method, others=others, window_s=self.cpu.window_s,
                                   excluded=excluded, host=host, host_words=host_words)
        if self.device == NVIDIA and not (self.nv is not None or shutil.which("nvidia-smi")):
            return isolation_block(device=NVIDIA, method="-", others=None, window_s=window_s, excluded=excluded,
                                   reason="neither pynvml nor nvidia-smi can list the GPU's compute processes")
        if self.device == INTEL_GPU and not shutil.which("xpu-smi"):
            return isolation_block(device=INTEL_GPU, method="-", others=None, window_s=window_s, excluded=excluded,
                                   reason="no xpu-smi on this host to list the GPU's processes")
        others, scope = gpu_others(list(self.gpu_seen.values()), server=self.server, oracle=self.oracle)
        method = ("NVML compute processes and per-process utilization samples" if self.nv is not None
                  else "nvidia-smi --query-compute-apps"
                  if self.device == NVIDIA else "xpu-smi ps") + f", on {scope}"
        return isolation_block(device=self.device, method=method, others=name_processes(others),
                               window_s=window_s, excluded=excluded, name=self.name)
