"""Energy counters in sysfs: RAPL for the CPU (`/sys/class/powercap/intel-rapl:*`) and an Intel GPU's hwmon
`energy1_input` (found by its PCI address under `/sys/class/drm/card*/device/hwmon/`), with its temperatures and
the GPU's actual clock where readable. Every meter has one interface:

    meter.start(); meter.sample() ...; reading = meter.stop()
    reading == {"source": "rapl", "available": True, "joules": 812.4, "watts_mean": 40.6, "window_s": 20.0, ...}
    reading == {"source": "rapl", "available": False, "reason": "not available: no /sys/class/powercap/..."}

A counter is read at start, at each `sample()` (the window's sampler calls it every second, so a counter that
wraps more than once in a long window is still added up right) and at stop; a read below the previous one wrapped
at `max_energy_range_uj` (RAPL). A counter that cannot be read says why ("not available: <reason>"), never 0.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

__all__ = ["CounterMeter", "Unavailable", "intel_gpu_meters", "pci_address", "rapl_meter", "unavailable"]

POWERCAP = Path("/sys/class/powercap")
DRM = Path("/sys/class/drm")
INTEL_VENDOR = "0x8086"


def unavailable(source: str, reason: str) -> dict:
    return {"source": source, "available": False, "reason": f"not available: {reason}"}


class Unavailable:
    """A meter that cannot measure on this host: its reading says why."""

    def __init__(self, source: str, reason: str) -> None:
        self.source, self.reason = source, reason

    def start(self) -> None:
        pass

    def sample(self) -> None:
        pass

    def stop(self) -> dict:
        return unavailable(self.source, self.reason)


def _read_int(path: Path) -> int:
    """An integer sysfs file; OSError / ValueError for the caller to name."""
    text = path.read_text().strip()
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{path} holds {text[:40]!r}, not a number") from None


def _why(path: Path, exc: Exception) -> str:
    if isinstance(exc, PermissionError):
        return (f"{path} is not readable (permission denied: since Linux 5.10 only root reads energy counters; run "
                f"as root or make it readable, e.g. `sudo chmod a+r {path}`)")
    if isinstance(exc, FileNotFoundError):
        return f"{path} is missing"
    if isinstance(exc, OSError):
        return f"reading {path} failed ({exc.strerror or exc})"
    return str(exc)


class CounterMeter:
    """One or more microjoule counters (a domain each) summed; wrap-around at each domain's range when known."""

    def __init__(self, source: str, counters: dict[str, Path], *, ranges: dict[str, int | None],
                 extras=None, describe: dict | None = None) -> None:
        self.source, self.counters, self.ranges = source, counters, ranges
        self.extras = extras  # () -> dict of temperatures / clocks, read at each sample and at stop
        self.describe = describe or {}
        self.failed: str | None = None
        self.last: dict[str, int] = {}
        self.total_uj: dict[str, int] = {}
        self.wraps = 0
        self.seen: list[dict] = []
        self.t0 = self.t1 = 0.0

    def _read(self) -> dict[str, int] | None:
        out = {}
        for name, path in self.counters.items():
            try:
                out[name] = _read_int(path)
            except (OSError, ValueError) as exc:
                self.failed = self.failed or _why(path, exc)
                return None
        return out

    def start(self) -> None:
        self.t0 = time.monotonic()
        first = self._read()
        if first is not None:
            self.last = first
            self.total_uj = {k: 0 for k in first}
        self._extras()

    def sample(self) -> None:
        if self.failed:
            return
        now = self._read()
        if now is None:
            return
        for name, value in now.items():
            before = self.last[name]
            if value >= before:
                self.total_uj[name] += value - before
            elif self.ranges.get(name):
                self.total_uj[name] += value + self.ranges[name] - before
                self.wraps += 1
            else:
                self.failed = (f"{self.counters[name]} went back from {before} to {value} and its range is unknown "
                               "(no max_energy_range_uj): the energy over the window cannot be told")
                return
            self.last[name] = value
        self._extras()

    def _extras(self) -> None:
        if self.extras is not None:
            self.seen.append(self.extras())

    def stop(self) -> dict:
        self.sample()
        self.t1 = time.monotonic()
        if self.failed:
            return unavailable(self.source, self.failed)
        window = self.t1 - self.t0
        joules = sum(self.total_uj.values()) / 1e6
        out = {"source": self.source, "available": True, "joules": round(joules, 3),
               "watts_mean": round(joules / window, 3) if window > 0 else None, "window_s": round(window, 3),
               "domains": {k: round(v / 1e6, 3) for k, v in self.total_uj.items()}, "wraps": self.wraps,
               **self.describe}
        out |= _extremes(self.seen)
        return out


def _extremes(seen: list[dict]) -> dict:
    """Temperature: the highest seen; clock: the lowest and highest seen (a throttled run shows its dip)."""
    out: dict = {}
    temps = [t for s in seen for t in (s.get("temperature_c") or {}).values() if t is not None]
    clocks = [s["clock_mhz"] for s in seen if s.get("clock_mhz") is not None]
    if temps:
        out["temperature_c_max"] = max(temps)
    if clocks:
        out["clock_mhz_min"], out["clock_mhz_max"] = min(clocks), max(clocks)
    return out


# -- RAPL ----------------------------------------------------------------------------------------------------------
def rapl_meter(root: Path = POWERCAP) -> CounterMeter | Unavailable:
    """The CPU packages' RAPL counters (`intel-rapl:N` named `package-*`; every top-level domain when none is named
    so), or why they cannot be read."""
    if not root.is_dir():
        return Unavailable("rapl", f"no {root} (no RAPL energy counters on this host: a VM, or a kernel without "
                                   "intel_rapl / powercap)")
    tops = sorted(p for p in root.glob("intel-rapl:*") if re.fullmatch(r"intel-rapl:\d+", p.name))
    if not tops:
        return Unavailable("rapl", f"no {root}/intel-rapl:* domain (no RAPL energy counters on this host: a VM, or "
                                   "a CPU without RAPL)")
    names = {}
    for p in tops:
        try:
            names[p.name] = (p / "name").read_text().strip()
        except OSError:
            names[p.name] = p.name
    packages = [p for p in tops if names[p.name].startswith("package")] or tops
    counters, ranges = {}, {}
    for p in packages:
        key = f"{p.name} ({names[p.name]})"
        counters[key] = p / "energy_uj"
        try:
            ranges[key] = _read_int(p / "max_energy_range_uj")
        except (OSError, ValueError):
            ranges[key] = None
    meter = CounterMeter("rapl", counters, ranges=ranges)
    probe = meter._read()
    if probe is None:
        return Unavailable("rapl", meter.failed or "unreadable")
    return meter


# -- Intel GPU hwmon -------------------------------------------------------------------------------------------------
def pci_address(accelerator: dict | None) -> str | None:
    """The first PCI address the run's accelerator identity names (xpu-smi's `PCI BDF Address`)."""
    text = (accelerator or {}).get("xpu-smi") or ""
    m = re.search(r"PCI BDF Address:\s*([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F])", text)
    return m.group(1).lower() if m else None


def _card_pci(card: Path) -> str:
    return os.path.basename(os.path.realpath(card / "device")).lower()


def _gpu_extras(card: Path, hwmon: Path):
    temps = sorted(hwmon.glob("temp*_input"))
    clocks = [card / "gt_act_freq_mhz", card / "device" / "tile0" / "gt0" / "freq0" / "act_freq"]

    def read() -> dict:
        out: dict = {"temperature_c": {}}
        for t in temps:
            label = t.with_name(t.name.replace("_input", "_label"))
            try:
                name = label.read_text().strip() if label.exists() else t.name.split("_")[0]
                out["temperature_c"][name] = _read_int(t) / 1000
            except (OSError, ValueError):
                continue
        for c in clocks:
            try:
                out["clock_mhz"] = _read_int(c)
                break
            except (OSError, ValueError):
                continue
        return out
    return read


def intel_gpu_meters(address: str | None, root: Path = DRM) -> list[CounterMeter | Unavailable]:
    """A meter per Intel GPU with a hwmon `energy1_input` (only the card at `address` when one is given), or one
    Unavailable saying why there is none."""
    source = "intel-gpu-hwmon"
    if not root.is_dir():
        return [Unavailable(source, f"no {root} (no DRM devices on this host)")]
    cards = sorted(p for p in root.glob("card*") if re.fullmatch(r"card\d+", p.name))
    if address:
        cards = [c for c in cards if _card_pci(c) == address.lower()]
        if not cards:
            return [Unavailable(source, f"no {root}/card* at PCI address {address}")]
    else:
        cards = [c for c in cards if _vendor(c) == INTEL_VENDOR]
    meters: list = []
    for card in cards:
        for hwmon in sorted((card / "device" / "hwmon").glob("hwmon*")):
            energy = hwmon / "energy1_input"
            if not energy.exists():
                continue
            pci = _card_pci(card)
            meter = CounterMeter(source, {f"{card.name} {pci}": energy}, ranges={},
                                 extras=_gpu_extras(card, hwmon),
                                 describe={"device": card.name, "pci": pci})
            probe = meter._read()
            meters.append(meter if probe is not None else Unavailable(source, meter.failed or "unreadable"))
            break
    if not meters:
        return [Unavailable(source, f"the card at PCI address {address} has no device/hwmon/hwmon*/energy1_input"
                            if address else f"no Intel GPU (vendor {INTEL_VENDOR}) under {root}/card* with a "
                            "device/hwmon/hwmon*/energy1_input")]
    return meters


def _vendor(card: Path) -> str | None:
    try:
        return (card / "device" / "vendor").read_text().strip().lower()
    except OSError:
        return None
