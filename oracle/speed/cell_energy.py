"""Energy per speed cell (`--oracle-power auto`): each cell's timed repeats metered by the run's meters (speed/power.py's
PowerWindow: RAPL, NVML or an Intel GPU's hwmon), summed into the cell's `energy` block.

    window = open_window(backend); window.start(); ...the cell's repeats...
    energy = cell_energy(*window.stop(generated_tokens=384))     # one window
    energy = combine_energy([energy_r1, energy_r2, energy_r3])   # interleaved: one window per repeat of a side

A cell's block: joules, mean watts, the window's seconds, joules per generated token (prefill included, as the card's
`power`), the highest temperature and the lowest / highest clock any meter saw, the isolation verdict of the window.
Where nothing is readable: `{"available": False, "reason": "not available: <why>"}` (the meter's own words, e.g. no
/sys/class/powercap on a VM), or "not measured: --oracle-power off".
"""

from __future__ import annotations

__all__ = ["cell_energy", "combine_energy", "energy_words"]


def _pick(meters: list[dict], suffix: str, agg):
    values = [v for m in meters for k, v in m.items() if k.endswith(suffix) and isinstance(v, (int, float))]
    return agg(values) if values else None


def cell_energy(power: dict, isolation: dict | None) -> dict:
    """One window's reading (PowerWindow.stop's pair) as a cell's `energy` block."""
    iso = (isolation or {}).get("verdict")
    if power.get("joules") is None:
        reason = power.get("reason") or "not available: no meter could read"
        return {"available": False, "reason": reason, "device": power.get("device"), "isolation": iso}
    meters = [m for m in power.get("meters") or [] if m.get("available")]
    return {"available": True, "device": power.get("device"), "source": ", ".join(m["source"] for m in meters),
            "joules": power["joules"], "window_s": power["window_s"], "watts_mean": power["watts_mean"],
            "generated_tokens": power["generated_tokens"], "joules_per_token": power["joules_per_token"],
            "temperature_c_max": _pick(meters, "temperature_c_max", max),
            "clock_mhz_min": _pick(meters, "clock_mhz_min", min), "clock_mhz_max": _pick(meters, "clock_mhz_max", max),
            "windows": 1, "isolation": iso}


def combine_energy(parts: list[dict]) -> dict | None:
    """Several windows of one cell and side (interleaved: one per repeat, the other side's repeats between them)
    as one block: joules, seconds and tokens summed; not available when any window was not (its reason)."""
    if not parts:
        return None
    missing = next((p for p in parts if not p["available"]), None)
    if missing is not None:
        return missing
    joules, window = sum(p["joules"] for p in parts), sum(p["window_s"] or 0 for p in parts)
    tokens = sum(p["generated_tokens"] for p in parts)
    temps = [p["temperature_c_max"] for p in parts if p["temperature_c_max"] is not None]
    lows = [p["clock_mhz_min"] for p in parts if p["clock_mhz_min"] is not None]
    highs = [p["clock_mhz_max"] for p in parts if p["clock_mhz_max"] is not None]
    isolation = [p["isolation"] for p in parts]
    return {"available": True, "device": parts[0]["device"], "source": parts[0]["source"],
            "joules": round(joules, 3), "window_s": round(window, 3),
            "watts_mean": round(joules / window, 3) if window else None, "generated_tokens": tokens,
            "joules_per_token": round(joules / tokens, 4) if tokens else None,
            "temperature_c_max": max(temps) if temps else None, "clock_mhz_min": min(lows) if lows else None,
            "clock_mhz_max": max(highs) if highs else None, "windows": len(parts),
            "isolation": "not isolated" if "not isolated" in isolation else isolation[0]}


def energy_words(energy: dict | None) -> str:
    """'3.2 J, 12.1 W mean, 0.025 J/token, 61 °C max, 800-1600 MHz' or 'not available: ...'."""
    if not energy:
        return "-"
    if not energy["available"]:
        return energy["reason"]
    out = [f"{energy['joules']:g} J", f"{energy['watts_mean']:g} W mean" if energy["watts_mean"] else None,
           f"{energy['joules_per_token']:g} J/token" if energy["joules_per_token"] else None,
           f"{energy['temperature_c_max']:g} °C max" if energy["temperature_c_max"] is not None else None,
           (f"{energy['clock_mhz_min']:g}-{energy['clock_mhz_max']:g} MHz" if energy["clock_mhz_min"] is not None
            else None)]
    return ", ".join(x for x in out if x)
