"""The folders a run writes: each proven writable before any request (a preflight write), and a reference folder
held by one recording run at a time (a lock file beside it).

    preflight(report_folder, "--report-dir")        # FolderError naming the folder and the fix
    lock = RecordLock.take(record_path)             # FolderError when another run records there
    ...
    lock.release()

The lock is `.NAME.lock` beside the reference folder (never inside it: the folder must stay empty until the
reference is renamed into place). It holds the pid, the host and the start time of the run that took it; a lock
whose process is gone is named as stale, with the fix, and never taken over silently.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from oracle.store.stamps import utc_now

__all__ = ["FolderError", "RecordLock", "discard_folder", "fresh_report_dir", "preflight"]


class FolderError(ValueError):
    """A folder oracle cannot write, or one another run holds; the message names the folder and the fix."""


def fresh_report_dir(label: str) -> Path:
    """The default report folder, reports/<UTC time>-<label>/, named apart from any earlier run's (a run in the same
    second gets -2, -3, ...)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_")  # python:pkg/runner.py:make -> one folder name
    folder = candidate = Path("reports") / f"{stamp}-{label}"
    n = 1
    while candidate.exists():
        n += 1
        candidate = folder.with_name(f"{folder.name}-{n}")
    return candidate


def discard_folder(folder: Path, *, made: bool) -> None:
    """Take back what a run that judged nothing (--oracle-plan) wrote: the whole folder when the run made it, else the
    report and server logs it wrote into a folder that was there before."""
    if made:
        shutil.rmtree(folder, ignore_errors=True)
        return
    for name in ("identity.json", "identity.md", "identity.html"):
        (folder / name).unlink(missing_ok=True)
    for log in folder.glob("server-boot*.log"):
        log.unlink(missing_ok=True)


def preflight(folder: Path, option: str, given: Path | None = None) -> None:
    """Create the folder and write, read back and remove a probe file there; FolderError when any of it fails.
    given: what the option named, when the folder checked is its parent."""
    probe = folder / f".oracle-preflight-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"oracle preflight\n")
        ok = probe.read_bytes() == b"oracle preflight\n"
        probe.unlink()
    except OSError as exc:
        where = "there" if given is None else f"in {folder}"
        raise FolderError(f"{option} {given or folder}: cannot write {where} ({exc.strerror or exc}); nothing was "
                          f"sent to the server; give {option} a folder you can write, or free space on its "
                          "disk") from None
    if not ok:
        raise FolderError(f"{option} {given or folder}: a file written in {folder} read back differently; give "
                          f"{option} a folder on a healthy disk")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


@dataclass
class RecordLock:
    path: Path  # the lock file
    holder: dict

    @classmethod
    def take(cls, reference: Path) -> "RecordLock":
        """Take the lock of the reference folder `reference` (--record DIR), or refuse naming its holder."""
        path = reference.parent / f".{reference.name}.lock"
        holder = {"pid": os.getpid(), "host": socket.gethostname(),
                  "started_utc": utc_now(), "reference": str(reference)}
        preflight(reference.parent, "--record", reference)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise FolderError(cls._refusal(reference, path)) from None
        with os.fdopen(fd, "w") as f:
            json.dump(holder, f)
        lock = cls(path, holder)
        atexit.register(lock.release)  # a run that ends without finishing (a usage error later on) lets go too
        return lock

    @staticmethod
    def _refusal(reference: Path, path: Path) -> str:
        try:
            other = json.loads(path.read_text())
            pid, host, started = int(other["pid"]), other.get("host", "?"), other.get("started_utc", "?")
        except (OSError, ValueError, KeyError, TypeError):
            return (f"--record {reference}: the lock file {path} is there but unreadable; if no other oracle run "
                    f"records into {reference}, delete {path} and run again")
        who = f"pid {pid} on {host}, started {started}"
        if host == socket.gethostname() and not _alive(pid):
            return (f"--record {reference}: a stale lock {path} of a run that is gone ({who}); nothing was sent "
                    f"to the server; check that no oracle run records into {reference}, delete {path} and run again")
        return (f"--record {reference}: another oracle run ({who}) is recording into this folder; nothing was "
                f"sent to the server; wait for it to finish, or record into another folder")

    def release(self) -> None:
        """Remove the lock file, when it is still this run's."""
        try:
            if json.loads(self.path.read_text()).get("pid") == self.holder["pid"]:
                self.path.unlink()
        except (OSError, ValueError):
            pass
