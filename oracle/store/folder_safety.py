"""Folder safety: a folder oracle writes is never one it reads (nor inside one, nor holding one), two folders it
writes never overlap, and an earlier report is never written over. Checked before anything is written or sent;
paths are compared resolved (symlinks followed), so `R`, `./R/` and a link to R are one folder.

    refusal = folder_refusal(writes=[Place("--report-dir", report)], reads=[Place("--reference", ref)])
    refusal = earlier_report_refusal(Place("--report-dir", report), marker="identity.json")
    refusal = name_refusal(Place("--record", record))     # a name longer than the filesystem allows
    refusal = reference_inside_refusal(Place("--out", out))  # a reference (manifest.json) at or above it
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Place", "earlier_report_refusal", "folder_refusal", "name_refusal", "reference_inside_refusal"]

NAME_MAX = 255  # bytes in one file or folder name on Linux and macOS filesystems (ext4, xfs, btrfs, apfs)


@dataclass(frozen=True)
class Place:
    """A path an option names: a folder written or read, or a file read (`file`: only its lying inside a folder
    written counts; writing beside a file does not change it)."""

    option: str  # as the user reads it: "--report-dir", "the default report folder reports/..."
    path: Path
    file: bool = False

    @property
    def resolved(self) -> Path:
        try:
            return Path(os.path.abspath(self.path)).resolve()
        except (OSError, RuntimeError):  # a symlink loop: compared as written
            return Path(os.path.abspath(self.path))

    @property
    def named(self) -> str:
        return f"{self.option} {self.path}"


def _within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def _relation(written: Place, other: Place) -> str | None:
    """How `other` overlaps the folder `written`, in words; None when it does not."""
    w, o = written.resolved, other.resolved
    if w == o:
        return f"{written.named} and {other.named} are the same {'file' if other.file else 'folder'} ({w})"
    if _within(o, w):
        return f"{other.named} lies inside {written.named} ({o} is within {w})"
    if not other.file and _within(w, o):
        return f"{written.named} lies inside {other.named} ({w} is within {o})"
    return None


def folder_refusal(writes: list[Place], reads: list[Place]) -> str | None:
    """Why these folders cannot be used together, naming both and the fix; None when they can."""
    for i, written in enumerate(writes):
        for other in writes[i + 1:]:
            relation = _relation(written, other)
            if relation:
                return (f"{relation}: oracle writes both, and one would be written over by the other; nothing was "
                        f"written or sent; give {written.option} and {other.option} folders apart from each other")
        for read in reads:
            relation = _relation(written, read)
            if relation:
                return (f"{relation}: oracle would write with {written.option} where it reads {read.option}; "
                        f"nothing was written or sent; give {written.option} a folder apart from {read.path}")
    return None


def earlier_report_refusal(place: Place, *, marker: str = "identity.json") -> str | None:
    """A folder that already holds a report (its `marker`) is never written over: the refusal, else None."""
    found = place.path / marker
    try:
        held = found.is_file()
    except OSError as exc:  # a folder that cannot even be looked at: named, never a traceback
        return (f"{place.named}: cannot be read ({exc.strerror or exc}); nothing was written or sent; give "
                f"{place.option} a folder you can write")
    if held:
        return (f"{place.named} holds an earlier report ({found}): oracle never writes over a report; nothing was "
                f"written or sent; give {place.option} a new folder (or leave it out for a fresh one), or delete "
                f"{place.path} first")
    return None


def name_refusal(place: Place) -> str | None:
    """A path with a name longer than a filesystem allows cannot be written (nor even looked at): the refusal."""
    for part in place.path.parts:
        size = len(part.encode("utf-8", "surrogateescape"))
        if size > NAME_MAX:
            return (f"{place.option} {part[:40]}...: a name of {size} bytes, longer than the {NAME_MAX} a file or "
                    f"folder name may have; nothing was written or sent; give {place.option} a shorter name")
    return None


def reference_inside_refusal(place: Place, *, above_only: bool = False) -> str | None:
    """A folder written that is a reference, or lies inside one (a manifest.json at it or above it), though no
    option names that reference: the refusal, else None. A reference is never written into. above_only: the folder
    itself may be one (a --record that overwrites its own reference with --record-overwrite)."""
    folder = place.resolved
    for at in (folder.parents if above_only else (folder, *folder.parents)):
        try:
            held = (at / "manifest.json").is_file()
        except OSError:
            continue
        if held:
            return (f"{place.named}: {at} is a reference (it holds manifest.json), and oracle never writes into a "
                    f"reference; nothing was written or sent; give {place.option} a folder outside it")
    return None
