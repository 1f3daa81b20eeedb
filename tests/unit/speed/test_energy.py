"""The sysfs energy readers against fake trees: RAPL packages summed, a wrap at max_energy_range_uj added up,
permission denied and missing files said as "not available: <reason>", an Intel GPU's hwmon found by its PCI
address with its temperature and clock; and this host's own RAPL reading, whatever it is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from oracle.speed.energy import POWERCAP, intel_gpu_meters, pci_address, rapl_meter


def rapl_tree(root: Path, domains: dict[str, tuple[str, int, int | None]]) -> Path:
    """intel-rapl:N folders: name, energy_uj, max_energy_range_uj (None: no range file)."""
    for key, (name, energy, top) in domains.items():
        d = root / key
        d.mkdir(parents=True)
        (d / "name").write_text(name + "\n")
        (d / "energy_uj").write_text(f"{energy}\n")
        if top is not None:
            (d / "max_energy_range_uj").write_text(f"{top}\n")
    return root


def set_energy(root: Path, key: str, value: int) -> None:
    (root / key / "energy_uj").write_text(f"{value}\n")


def test_rapl_sums_the_packages_over_the_window(tmp_path):
    root = rapl_tree(tmp_path, {"intel-rapl:0": ("package-0", 1_000_000, 2**32),
                                "intel-rapl:1": ("package-1", 5_000_000, 2**32),
                                "intel-rapl:0:0": ("core", 7, 2**32),  # a subdomain: inside package-0 already
                                "intel-rapl:2": ("psys", 0, 2**32)})   # the platform: not a package
    meter = rapl_meter(root)
    meter.start()
    set_energy(root, "intel-rapl:0", 3_500_000)
    set_energy(root, "intel-rapl:1", 6_000_000)
    reading = meter.stop()
    assert reading["available"] is True and reading["source"] == "rapl"
    assert reading["joules"] == 3.5 and reading["wraps"] == 0
    assert reading["domains"] == {"intel-rapl:0 (package-0)": 2.5, "intel-rapl:1 (package-1)": 1.0}
    assert reading["window_s"] >= 0 and reading["watts_mean"] is not None


def test_a_counter_that_wraps_is_added_up_through_its_range(tmp_path):
    top = 262_143_328_850  # a real package's max_energy_range_uj
    root = rapl_tree(tmp_path, {"intel-rapl:0": ("package-0", top - 1_000_000, top)})
    meter = rapl_meter(root)
    meter.start()
    set_energy(root, "intel-rapl:0", top - 250_000)  # +0.75 J
    meter.sample()
    set_energy(root, "intel-rapl:0", 500_000)  # wrapped: +0.25 J to the top, +0.5 J after it
    meter.sample()
    set_energy(root, "intel-rapl:0", 2_500_000)  # +2 J
    reading = meter.stop()
    assert reading["joules"] == pytest.approx(3.5) and reading["wraps"] == 1


def test_a_counter_going_back_without_a_range_is_not_available(tmp_path):
    root = rapl_tree(tmp_path, {"intel-rapl:0": ("package-0", 9_000_000, None)})
    meter = rapl_meter(root)
    meter.start()
    set_energy(root, "intel-rapl:0", 10)
    reading = meter.stop()
    assert reading == {"source": "rapl", "available": False,
                       "reason": f"not available: {root}/intel-rapl:0/energy_uj went back from 9000000 to 10 and its "
                                 "range is unknown (no max_energy_range_uj): the energy over the window cannot be "
                                 "told"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file without read permission")
def test_permission_denied_is_not_available_naming_the_fix(tmp_path):
    root = rapl_tree(tmp_path, {"intel-rapl:0": ("package-0", 1, 2**32)})
    (root / "intel-rapl:0" / "energy_uj").chmod(0)
    reading = rapl_meter(root).stop()
    path = root / "intel-rapl:0" / "energy_uj"
    assert reading["reason"] == (f"not available: {path} is not readable (permission denied: since Linux 5.10 only "
                                 f"root reads energy counters; run as root or make it readable, e.g. `sudo chmod a+r "
                                 f"{path}`)")


def test_permission_denied_as_the_kernel_says_it(tmp_path, monkeypatch):
    """The same through the reader, for a root test process (root reads a file chmod 0 anyway)."""
    root = rapl_tree(tmp_path, {"intel-rapl:0": ("package-0", 1, 2**32)})
    path = root / "intel-rapl:0" / "energy_uj"
    real = Path.read_text

    def read_text(self, *a, **k):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", read_text)
    reading = rapl_meter(root).stop()
    assert reading["available"] is False
    assert reading["reason"].startswith(f"not available: {path} is not readable (permission denied: since Linux 5.10")


def test_missing_trees_and_files_say_what_is_missing(tmp_path):
    assert rapl_meter(tmp_path / "nope").stop() == {
        "source": "rapl", "available": False,
        "reason": f"not available: no {tmp_path / 'nope'} (no RAPL energy counters on this host: a VM, or a kernel "
                  "without intel_rapl / powercap)"}
    (tmp_path / "empty").mkdir()
    assert rapl_meter(tmp_path / "empty").stop()["reason"] == (
        f"not available: no {tmp_path / 'empty'}/intel-rapl:* domain (no RAPL energy counters on this host: a VM, "
        "or a CPU without RAPL)")
    root = rapl_tree(tmp_path / "r", {"intel-rapl:0": ("package-0", 1, 2**32)})
    (root / "intel-rapl:0" / "energy_uj").unlink()
    assert rapl_meter(root).stop()["reason"] == f"not available: {root}/intel-rapl:0/energy_uj is missing"
    (root / "intel-rapl:0" / "energy_uj").write_text("garbage\n")
    assert rapl_meter(root).stop()["reason"] == (f"not available: {root}/intel-rapl:0/energy_uj holds 'garbage', "
                                                 "not a number")


def test_this_hosts_rapl_reads_or_says_exactly_why_not():
    """This machine (a VM in CI) has no powercap tree: the reading is that sentence; a host that has one reads it
    or names the file it cannot read."""
    reading = rapl_meter().stop()
    if not POWERCAP.is_dir():
        assert reading == {"source": "rapl", "available": False,
                           "reason": "not available: no /sys/class/powercap (no RAPL energy counters on this host: "
                                     "a VM, or a kernel without intel_rapl / powercap)"}
    elif reading["available"]:
        assert reading["joules"] >= 0
    else:
        assert reading["reason"].startswith("not available: ")


def gpu_tree(root: Path, pci: str, *, card: str = "card1", vendor: str = "0x8086", energy: int | None = 10_000_000,
             temp: int | None = 51_000, clock: int | None = 2400) -> Path:
    """/sys/class/drm/cardN -> a PCI device folder with vendor, hwmon/hwmon3/energy1_input, temp1_input."""
    device = root / "devices" / "pci0000:00" / pci
    hwmon = device / "hwmon" / "hwmon3"
    hwmon.mkdir(parents=True)
    (device / "vendor").write_text(vendor + "\n")
    if energy is not None:
        (hwmon / "energy1_input").write_text(f"{energy}\n")
    if temp is not None:
        (hwmon / "temp1_input").write_text(f"{temp}\n")
        (hwmon / "temp1_label").write_text("pkg\n")
    drm = root / "class" / "drm"
    (drm / card).mkdir(parents=True)
    (drm / card / "device").symlink_to(device)
    if clock is not None:
        (drm / card / "gt_act_freq_mhz").write_text(f"{clock}\n")
    return drm


def test_an_intel_gpu_is_found_by_its_pci_address_with_temperature_and_clock(tmp_path):
    drm = gpu_tree(tmp_path, "0000:03:00.0")
    gpu_tree(tmp_path, "0000:83:00.0", card="card2", energy=50)
    meters = intel_gpu_meters("0000:03:00.0", drm)
    assert len(meters) == 1
    meter = meters[0]
    meter.start()
    hwmon = tmp_path / "devices" / "pci0000:00" / "0000:03:00.0" / "hwmon" / "hwmon3"
    (hwmon / "energy1_input").write_text("130000000\n")  # +120 J
    (hwmon / "temp1_input").write_text("78500\n")
    reading = meter.stop()
    assert reading["available"] and reading["source"] == "intel-gpu-hwmon"
    assert reading["joules"] == 120.0 and reading["device"] == "card1" and reading["pci"] == "0000:03:00.0"
    assert reading["temperature_c_max"] == 78.5 and reading["clock_mhz_min"] == reading["clock_mhz_max"] == 2400
    assert len(intel_gpu_meters(None, drm)) == 2  # no address known: every Intel GPU with a counter, one each


def test_intel_gpu_not_available_reasons(tmp_path):
    assert intel_gpu_meters(None, tmp_path / "none")[0].stop()["reason"] == (
        f"not available: no {tmp_path / 'none'} (no DRM devices on this host)")
    drm = gpu_tree(tmp_path, "0000:03:00.0", energy=None)
    assert intel_gpu_meters("0000:04:00.0", drm)[0].stop()["reason"] == (
        f"not available: no {drm}/card* at PCI address 0000:04:00.0")
    assert intel_gpu_meters("0000:03:00.0", drm)[0].stop()["reason"] == (
        "not available: the card at PCI address 0000:03:00.0 has no device/hwmon/hwmon*/energy1_input")
    other = gpu_tree(tmp_path / "amd", "0000:05:00.0", vendor="0x1002")
    assert intel_gpu_meters(None, other)[0].stop()["reason"] == (
        f"not available: no Intel GPU (vendor 0x8086) under {other}/card* with a device/hwmon/hwmon*/energy1_input")


def test_the_pci_address_comes_from_xpu_smi_in_the_identity():
    discovery = "| 0 | Device Name: Intel(R) Arc(TM) Pro B70\n|   | PCI BDF Address: 0000:03:00.0 |"
    assert pci_address({"xpu-smi": discovery}) == "0000:03:00.0"
    assert pci_address({}) is None and pci_address(None) is None
