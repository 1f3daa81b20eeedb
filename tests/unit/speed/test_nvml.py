"""NVML parsing with a small fake pynvml module object: the energy counter in millijoules over the window, power,
temperature and SM clock sampled, the compute processes per GPU; nvidia-smi's and xpu-smi's process tables; and the
chooser and the window built on them."""

from __future__ import annotations

import sys
import types

from oracle.speed import power as power_module
from oracle.speed.isolation import gpu_others, xpu_smi_processes
from oracle.speed.nvml import MISSING, NvmlMeter, load_nvml, nvidia_smi_processes, nvml_processes
from oracle.speed.power import PowerWindow, choose_device


class NVMLError(Exception):
    pass


def fake_nvml(processes: dict[int, list[tuple[int, int | None]]], *, energy_mj=(1_000_000, 1_250_500),
              energy_error: bool = False, utilization: dict[int, list[tuple[int, int]]] | None = None):
    """A pynvml stand-in: GPUs 0..n-1, each with its compute processes (pid, used bytes), an energy counter that
    steps through energy_mj at each read, power 300 W, 61 C, SM clock 1980 MHz."""
    nv = types.SimpleNamespace(NVML_TEMPERATURE_GPU=0, NVML_CLOCK_SM=1, NVMLError=NVMLError)
    reads = iter(energy_mj)
    nv.nvmlInit = lambda: None
    nv.nvmlDeviceGetCount = lambda: len(processes)
    nv.nvmlDeviceGetHandleByIndex = lambda i: ("handle", i)
    nv.nvmlDeviceGetName = lambda h: b"NVIDIA H200"
    nv.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=f"00000000:{0x17 + h[1]:02X}:00.0")

    def energy(h):
        if energy_error:
            raise NVMLError("Not Supported")
        return next(reads)
    nv.nvmlDeviceGetTotalEnergyConsumption = energy
    nv.nvmlDeviceGetPowerUsage = lambda h: 300_000
    nv.nvmlDeviceGetTemperature = lambda h, sensor: 61
    nv.nvmlDeviceGetClockInfo = lambda h, clock: 1980
    nv.nvmlDeviceGetComputeRunningProcesses = lambda h: [types.SimpleNamespace(pid=p, usedGpuMemory=m)
                                                         for p, m in processes[h[1]]]
    nv.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=97, memory=40)

    def process_utilization(h, since):  # the driver's per-process samples after `since` (microseconds)
        rows = [types.SimpleNamespace(pid=p, smUtil=u, memUtil=0, timeStamp=since + 1000 * (k + 1))
                for k, (p, u) in enumerate((utilization or {}).get(h[1], []))]
        if not rows:
            raise NVMLError("Not Found")
        return rows
    nv.nvmlDeviceGetProcessUtilization = process_utilization
    return nv


def test_the_energy_counter_in_millijoules_and_the_samples():
    meter = NvmlMeter(fake_nvml({0: []}), 0)
    meter.start()
    meter.sample()
    reading = meter.stop()
    assert reading["available"] and reading["source"] == "nvml" and reading["joules"] == 250.5
    assert reading["name"] == "NVIDIA H200" and reading["pci"] == "00000000:17:00.0"
    assert reading["power_w_max"] == 300.0 and reading["temperature_c_max"] == 61.0
    assert reading["sm_clock_mhz_min"] == reading["sm_clock_mhz_max"] == 1980.0


def test_a_gpu_without_an_energy_counter_is_not_available():
    meter = NvmlMeter(fake_nvml({0: []}, energy_error=True), 0)
    meter.start()
    reading = meter.stop()
    assert reading["available"] is False
    assert reading["reason"] == "not available: NVML gives no energy counter for GPU 0 (Not Supported)"


def test_without_pynvml_the_reason_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    assert load_nvml() == (None, MISSING)
    assert MISSING == "pynvml is not installed (optional: pip install nvidia-ml-py)"


def test_compute_processes_per_gpu_and_the_others_on_the_servers_gpu():
    nv = fake_nvml({0: [(100, 70 * 2**30), (555, 2 * 2**30)], 1: [(777, None)]})
    procs = nvml_processes(nv)
    assert [(p["pid"], p["gpu"], p["gpu_memory_mib"]) for p in procs] == [(100, 0, 71680.0), (555, 0, 2048.0),
                                                                          (777, 1, None)]
    others, scope = gpu_others(procs, server={100, 101}, oracle={1, 50})
    assert [o["pid"] for o in others] == [555]  # GPU 1's process is on another GPU: not the server's device
    assert scope == "the server's GPU(s) 00000000:17:00.0"
    others, scope = gpu_others(procs, server={999}, oracle=set())
    assert [o["pid"] for o in others] == [100, 555, 777] and scope.startswith("every GPU (the server's processes")


def test_nvidia_smi_and_xpu_smi_tables():
    csv = "00000000:17:00.0, 4242, /usr/bin/llama-server, 70123\n00000000:17:00.0, 5151, python3, [N/A]\n"
    assert nvidia_smi_processes(csv) == [
        {"pid": 4242, "pci": "00000000:17:00.0", "name": "/usr/bin/llama-server", "source": "nvidia-smi",
         "gpu_memory_mib": 70123.0},
        {"pid": 5151, "pci": "00000000:17:00.0", "name": "python3", "source": "nvidia-smi", "gpu_memory_mib": None}]
    table = "PID       Command             DeviceID       SHR       MEM\n4242      llama-server        0   0   1522\n"
    assert xpu_smi_processes(table) == [{"pid": 4242, "name": "llama-server", "gpu": 0, "source": "xpu-smi ps"}]


def test_the_chooser_reads_the_accelerator_of_the_identity():
    assert choose_device({"nvidia-smi": "NVIDIA H200, 570.124, 143771 MiB"})[0] == "nvidia"
    assert choose_device({"xpu-smi": "Device Name: Intel(R) Arc(TM) Pro B70"})[0] == "intel-gpu"
    assert choose_device({"kernel_modules": {"xe": "loaded"}})[0] == "intel-gpu"
    assert choose_device({"kernel_modules": {"i915": "loaded"}}) == (
        "cpu", "RAPL: the run's accelerator is the CPU (no GPU in the identity)")  # an iGPU's driver: a CPU run
    assert choose_device({}) == choose_device(None)


def test_an_nvidia_window_meters_the_servers_gpu_and_names_another_engine(monkeypatch):
    """The window on an NVIDIA identity: NVML's energy on the GPU that holds the server, and the respawned engine
    on that GPU named: not isolated."""
    nv = fake_nvml({0: [(4242, 2**30)], 1: [(4242, 2**30), (5151, 2**30)]}, energy_mj=(0, 5_000, 9_000, 10_000))
    monkeypatch.setattr(power_module, "load_nvml", lambda: (nv, None))
    class Found:  # the server as ServerProcesses finds it by its port
        def __init__(self, url, *, in_process, oracle):
            self.pids, self.found, self.local = {4242}, "pid 4242 listens on port 8080", True

        def follow(self):
            pass
    monkeypatch.setattr(power_module, "ServerProcesses", Found)
    smi = "NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB\nNVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB"
    window = PowerWindow.open("auto", {"accelerator": {"nvidia-smi": smi}}, url="http://127.0.0.1:8080",
                              in_process=False)
    assert [m.index for m in window.meters] == [0, 1] and window.chosen.startswith("NVML: ")
    window.start()
    power, isolation = window.stop(generated_tokens=100)
    assert power["joules"] == 14.0 and power["joules_per_token"] == 0.14  # GPU 0: 0 -> 9000 mJ, GPU 1: 5000 -> 10000 mJ
    assert isolation["verdict"] == "not isolated" and [o["pid"] for o in isolation["others"]] == [5151]
    assert isolation["method"].startswith("NVML compute processes and per-process utilization samples, on the "
                                          "server's GPU(s)")
    # the device named as its model (nvidia-smi's name), and the window stated (never `window_s: null`)
    assert isolation["reason"].startswith("not isolated: another process ran on the NVIDIA H100 80GB HBM3 during the "
                                          "timed run: ")
    assert isolation["device_name"] == "NVIDIA H100 80GB HBM3" and isolation["device"] == "nvidia"
    assert isinstance(isolation["window_s"], float) and isolation["window_s"] >= 0


def test_power_off_measures_nothing_and_says_so():
    window = PowerWindow.open("off", {"accelerator": {}}, url="http://127.0.0.1:8080", in_process=False)
    window.start()
    power, isolation = window.stop(generated_tokens=10)
    assert power == {"mode": "off", "device": "cpu", "reason": "not measured: --oracle-power off"}
    assert isolation["verdict"] == "not checked" and isolation["reason"] == "--oracle-power off"


def test_a_remote_server_is_neither_metered_nor_checked_here():
    window = PowerWindow.open("auto", {"accelerator": {}}, url="http://gpu-box.invalid:8000", in_process=False)
    window.start()
    power, isolation = window.stop(generated_tokens=10)
    why = "the server (gpu-box.invalid) is not on this host"
    assert power["meters"] == [{"source": "rapl", "available": False, "reason": f"not available: {why}"}]
    assert isolation["verdict"] == "not checked" and isolation["reason"] == why


def test_every_isolation_block_states_its_window(monkeypatch):
    """Issue 53: the H100's GPU isolation blocks read `window_s: null`. Isolated or not, and where nothing could be
    checked (the server on another host, no pynvml and no nvidia-smi to list the GPU's processes), the block states
    the window it covers; only `--oracle-power off` opens none (test above)."""
    smi = "NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB"
    remote = PowerWindow.open("auto", {"accelerator": {"nvidia-smi": smi}}, url="http://gpu-box.invalid:8000",
                              in_process=False)

    class Found:  # a local server found by its port
        def __init__(self, url, *, in_process, oracle):
            self.pids, self.found, self.local = {4242}, "pid 4242 listens on port 8080", True

        def follow(self):
            pass
    monkeypatch.setattr(power_module, "ServerProcesses", Found)
    monkeypatch.setattr(power_module, "load_nvml", lambda: (None, "not available: pynvml is not installed"))
    monkeypatch.setattr(power_module, "query_nvidia_smi", lambda: None)
    monkeypatch.setattr(power_module.shutil, "which", lambda name: None)
    blind = PowerWindow.open("auto", {"accelerator": {"nvidia-smi": smi}}, url="http://127.0.0.1:8080",
                             in_process=False)
    for window, reason in ((remote, "is not on this host"), (blind, "neither pynvml nor nvidia-smi")):
        window.start()
        _, isolation = window.stop(generated_tokens=10)
        assert isolation["verdict"] == "not checked" and reason in isolation["reason"], isolation
        assert isinstance(isolation["window_s"], float) and isolation["window_s"] >= 0, isolation


def test_a_short_gpu_job_seen_only_in_the_utilization_samples_makes_the_window_not_isolated(monkeypatch):
    """A process that ran on the server's GPU and ended between two polls of the compute-process list is still in
    NVML's per-process utilization samples: named, with its highest SM utilization."""
    nv = fake_nvml({0: [(4242, 2**30)]}, energy_mj=(0, 1_000, 2_000), utilization={0: [(4242, 90), (7777, 65)]})
    monkeypatch.setattr(power_module, "load_nvml", lambda: (nv, None))

    class Found:
        def __init__(self, url, *, in_process, oracle):
            self.pids, self.found, self.local = {4242}, "pid 4242 listens on port 8080", True

        def follow(self):
            pass
    monkeypatch.setattr(power_module, "ServerProcesses", Found)
    window = PowerWindow.open("auto", {"accelerator": {"nvidia-smi": "NVIDIA H100"}}, url="http://127.0.0.1:8080",
                              in_process=False)
    window.start()
    power, isolation = window.stop(generated_tokens=10)
    assert isolation["verdict"] == "not isolated" and [o["pid"] for o in isolation["others"]] == [7777]
    short = isolation["others"][0]
    assert short["source"] == "nvml utilization" and short["sm_util_max"] == 65
    assert ", 65% SM)" in isolation["reason"]
    assert power["meters"][0]["gpu_util_pct_max"] == 97.0
