"""Headless Chromium (Debian's `chromium`) as a test instrument: DOM, console messages, screenshot."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]
TIMEOUT_S = 90


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class PageLoad:
    dom: str
    console: list[str]  # console messages the page produced (errors included)


def load(page: Path, screenshot: Path | None = None, size: str = "1200,3800") -> PageLoad:
    """Open a local file; return the rendered DOM and the page's console lines."""
    binary = chromium_path()
    assert binary, "chromium is not installed (apt-get install chromium)"
    with tempfile.TemporaryDirectory() as profile:
        args = [binary, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size}"]
        dom = subprocess.run(
            [*args, "--dump-dom", page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=True,
        )
        if screenshot is not None:
            subprocess.run(
                [*args, f"--screenshot={screenshot}", page.resolve().as_uri()],
                capture_output=True,
                timeout=TIMEOUT_S,
                check=True,
            )
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    return PageLoad(dom=dom.stdout, console=console)
