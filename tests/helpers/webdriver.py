"""Real headless Chromium, driven over the W3C WebDriver protocol with httpx (chromedriver from Debian).

    with Chromium() as browser:
        browser.open(path)                      # file:// with the network cut off
        rows = browser.run("return document.querySelectorAll('tr').length")
        png = browser.screenshot()

Missing binaries fail with the install command, never skip.
"""

from __future__ import annotations

import base64
import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path

import httpx

from oracle.targets.launched import free_port

INSTALL = "apt-get install -y chromium chromium-driver"


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError(f"none of {', '.join(names)} is installed; install them with `{INSTALL}`")


class Chromium:
    def __init__(self) -> None:
        self.chromium = _binary("chromium", "chromium-browser", "google-chrome")
        self.driver = _binary("chromedriver")
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.session: str | None = None
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60)

    def __enter__(self) -> "Chromium":
        self.proc = subprocess.Popen([self.driver, f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if self.http.get("/status").json()["value"]["ready"]:
                    break
            except (httpx.HTTPError, ValueError, KeyError):
                time.sleep(0.2)
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>"]
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": self.chromium, "args": args}}}}
        r = self.http.post("/session", json=caps)
        assert r.status_code == 200, r.text
        self.session = r.json()["value"]["sessionId"]
        # Network cut off as well (Chromium's own switch, on top of the dead proxy).
        self._post("/chromium/network_conditions", {"network_conditions": {
            "offline": True, "latency": 0, "download_throughput": 0, "upload_throughput": 0}})
        return self

    def _post(self, path: str, body: dict):
        r = self.http.post(f"/session/{self.session}{path}", json=body)
        assert r.status_code == 200, f"{path}: {r.text[:500]}"
        return r.json()["value"]

    def open(self, path: Path) -> None:
        self._post("/url", {"url": path.resolve().as_uri()})

    def run(self, script: str, *args):
        return self._post("/execute/sync", {"script": script, "args": list(args)})

    def screenshot(self) -> bytes:
        r = self.http.get(f"/session/{self.session}/screenshot")
        assert r.status_code == 200, r.text[:500]
        return base64.b64decode(r.json()["value"])

    def __exit__(self, *exc) -> None:
        try:
            if self.session:
                self.http.delete(f"/session/{self.session}")
        finally:
            if self.proc:
                self.proc.terminate()
                self.proc.wait(10)
            self.http.close()


def png_distinct_bytes(png: bytes) -> int:
    """How many distinct byte values the decoded pixel rows hold (a blank page gives very few)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        if kind == b"IDAT":
            idat += png[pos + 8:pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(idat)))
