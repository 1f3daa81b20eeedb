"""NVIDIA GPUs through NVML (`pynvml`, an optional dependency: `pip install nvidia-ml-py`): a device's energy
counter (`nvmlDeviceGetTotalEnergyConsumption`, millijoules since the driver loaded) over the window, its power,
temperature and SM clock at each sample, and the compute processes on it. Without pynvml the processes come from
`nvidia-smi --query-compute-apps`; the energy is then not available.

    nv = load_nvml()                      # the module, or None and why (nvml_missing)
    meter = NvmlMeter(nv, index=0); meter.start(); meter.sample(); reading = meter.stop()
    nvml_processes(nv)                    # [{"pid", "gpu", "gpu_memory_mib", "source"}]
    nvidia_smi_processes(text)            # the same from nvidia-smi's CSV
"""

from __future__ import annotations

import shutil
import subprocess
import time

from oracle.speed.energy import unavailable

__all__ = ["NVIDIA_SMI_APPS", "NvmlMeter", "load_nvml", "nvidia_smi_processes", "nvml_device_count",
           "nvml_process_utilization",
           "nvml_processes", "query_nvidia_smi"]

SOURCE = "nvml"
NVIDIA_SMI_APPS = ["nvidia-smi", "--query-compute-apps=gpu_bus_id,pid,process_name,used_memory",
                   "--format=csv,noheader,nounits"]
MISSING = "pynvml is not installed (optional: pip install nvidia-ml-py)"


def load_nvml():
    """(the initialised pynvml module, None) or (None, why not)."""
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        return None, MISSING
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # pynvml.NVMLError and its many subclasses: no driver, no device
        return None, f"NVML did not initialise ({exc})"
    return pynvml, None


def nvml_device_count(nv) -> int:
    try:
        return int(nv.nvmlDeviceGetCount())
    except Exception:
        return 0


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlMeter:
    """One GPU's energy counter over the window, with power, temperature and SM clock sampled."""

    def __init__(self, nv, index: int) -> None:
        self.nv, self.index = nv, index
        self.source = SOURCE
        self.failed: str | None = None
        self.e0 = self.e1 = 0
        self.t0 = self.t1 = 0.0
        self.samples: list[dict] = []
        self.describe: dict = {"device": f"GPU {index}"}
        try:
            self.handle = nv.nvmlDeviceGetHandleByIndex(index)
            self.describe["name"] = _text(nv.nvmlDeviceGetName(self.handle))
            self.describe["pci"] = _text(nv.nvmlDeviceGetPciInfo(self.handle).busId).lower()
        except Exception as exc:
            self.handle, self.failed = None, f"NVML could not open GPU {index} ({exc})"

    def _energy(self) -> int | None:
        try:
            return int(self.nv.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        except Exception as exc:
            self.failed = self.failed or f"NVML gives no energy counter for GPU {self.index} ({exc})"
            return None

    def start(self) -> None:
        self.t0 = time.monotonic()
        if self.failed:
            return
        e = self._energy()
        if e is not None:
            self.e0 = e
        self.sample()

    def sample(self) -> None:
        if self.handle is None:
            return
        nv, h, seen = self.nv, self.handle, {}
        for key, read in (("power_w", lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000),
                          ("temperature_c", lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
                          ("sm_clock_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
                          ("gpu_util_pct", lambda: nv.nvmlDeviceGetUtilizationRates(h).gpu)):
            try:
                seen[key] = round(float(read()), 3)
            except Exception:
                continue
        self.samples.append(seen)

    def stop(self) -> dict:
        self.sample()
        self.t1 = time.monotonic()
        if self.failed:
            return unavailable(self.source, self.failed) | self.describe
        e = self._energy()
        if e is None:
            return unavailable(self.source, self.failed) | self.describe
        window = self.t1 - self.t0
        joules = (e - self.e0) / 1000
        out = {"source": self.source, "available": True, "joules": round(joules, 3),
               "watts_mean": round(joules / window, 3) if window > 0 else None, "window_s": round(window, 3),
               **self.describe}
        for key, agg in (("power_w", max), ("temperature_c", max), ("sm_clock_mhz", min), ("sm_clock_mhz", max),
                         ("gpu_util_pct", min), ("gpu_util_pct", max)):
            values = [s[key] for s in self.samples if key in s]
            if values:
                out[f"{key}_{agg.__name__}"] = agg(values)
        return out


def nvml_processes(nv) -> list[dict]:
    """Every GPU's compute processes: pid, the GPU's index and PCI address, its memory in MiB (None when NVML
    does not say)."""
    out = []
    for i in range(nvml_device_count(nv)):
        try:
            h = nv.nvmlDeviceGetHandleByIndex(i)
            pci = _text(nv.nvmlDeviceGetPciInfo(h).busId).lower()
            procs = nv.nvmlDeviceGetComputeRunningProcesses(h)
        except Exception:
            continue
        for p in procs:
            used = getattr(p, "usedGpuMemory", None)
            out.append({"pid": int(p.pid), "gpu": i, "pci": pci, "source": "nvml",
                        "gpu_memory_mib": round(used / 2**20, 1) if isinstance(used, int) else None})
    return out


def nvml_process_utilization(nv, since: dict[int, int]) -> list[dict]:
    """Per-process SM utilization samples the driver kept since the last call (`since`: GPU index -> the last sample's
    timestamp in microseconds, updated): a process that ran and ended between two polls of the compute-process list
    is still in the driver's sample buffer, so a storm of short GPU jobs is seen."""
    out = []
    for i in range(nvml_device_count(nv)):
        try:
            h = nv.nvmlDeviceGetHandleByIndex(i)
            pci = _text(nv.nvmlDeviceGetPciInfo(h).busId).lower()
            samples = nv.nvmlDeviceGetProcessUtilization(h, since.get(i, 0))
        except Exception:  # NVML_ERROR_NOT_FOUND: no sample since; NOT_SUPPORTED on some GPUs
            continue
        for sample in samples:
            since[i] = max(since.get(i, 0), int(sample.timeStamp))
            out.append({"pid": int(sample.pid), "gpu": i, "pci": pci, "source": "nvml utilization",
                        "sm_util": int(sample.smUtil)})
    return out


def query_nvidia_smi() -> str | None:
    """nvidia-smi's compute apps as CSV, or None without nvidia-smi (or when it fails)."""
    if shutil.which(NVIDIA_SMI_APPS[0]) is None:
        return None
    try:
        done = subprocess.run(NVIDIA_SMI_APPS, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def nvidia_smi_processes(text: str) -> list[dict]:
    """`gpu_bus_id, pid, process_name, used_memory` rows (MiB, no units) as process dicts; "[N/A]" memory as None."""
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4 or not parts[1].isdigit():
            continue
        mem = parts[3].split()[0] if parts[3] else ""
        out.append({"pid": int(parts[1]), "pci": parts[0].lower(), "name": parts[2], "source": "nvidia-smi",
                    "gpu_memory_mib": float(mem) if mem.replace(".", "", 1).isdigit() else None})
    return out
