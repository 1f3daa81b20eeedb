"""Real headless Chromium through selenium, with the system's chromedriver (Debian's chromium-driver).

    with headless_chromium() as browser:           # a selenium WebDriver, network cut off
        browser.get(path.resolve().as_uri())
        rows = browser.execute_script("return document.querySelectorAll('tr').length")
        png = browser.get_screenshot_as_png()

Missing binaries fail with the install command, never skip; Selenium Manager is never asked to download one.
"""

from __future__ import annotations

import shutil
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

INSTALL = "apt-get install -y chromium chromium-driver"


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError(f"none of {', '.join(names)} is installed; install them with `{INSTALL}`")


@contextmanager
def headless_chromium() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium", "chromium-browser", "google-chrome")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
                "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=_binary("chromedriver")))
    try:
        # Network cut off as well (Chromium's own switch, on top of the dead proxy).
        driver.set_network_conditions(offline=True, latency=0, download_throughput=0, upload_throughput=0)
        yield driver
    finally:
        driver.quit()


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
