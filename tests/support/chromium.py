"""Headless Chromium as a test instrument: a page audited the way a reader sees it.

Playwright's Python package drives the *system's* Chromium (Debian's `chromium`, which CI installs
as root in .ci/run) through `executable_path`: no browser is ever downloaded (`playwright install`
is never run). Tests skip with `SKIP_REASON` when either the package or the browser is missing.

`audit` opens a local HTML file, expands every `<details>`, visits every `<section>` and reports
what a reader would see broken (the lists in `PageAudit`), with a full-page screenshot.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

VIEWPORT = {"width": 1300, "height": 900}
TIMEOUT_MS = 60_000
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]

# Python's own spelling of a value, printed where a formatted value belongs:
# - a dict or list literal with quoted keys or items:            {'requests': 1875   ['a', 'b']
# - None, booleans, not-a-number and infinity as Python writes them (case-sensitive, whole words)
# - a float with its full repr instead of a rounded figure:      462.20000000000005 (seven or more
#   significant decimals: a rounded small figure such as 0.0000987 has leading zeros, not digits)
# - a dataclass / pydantic / default object repr:                Figure(metric=…   <object at 0x…>
PYTHON_REPR = re.compile(
    r"""[{\[]\s*['"]
      | \b(?:None|True|False|nan|NaN|inf)\b
      | \b\d+\.0*[1-9]\d{6,}\b
      | \b[A-Z]\w*\(\w+=
      | \bobject\ at\ 0x""",
    re.VERBOSE,
)
# A cell narrower than its longest word (capped at this many em: a 64-digit hash may break) has
# broken a word into pieces: the Workload keys printed a few characters per line.
MIN_CELL_EM = 6

_MEASURE = """(minEm) => {
  const px = (el, prop) => parseFloat(getComputedStyle(el)[prop]) || 0;
  const where = (el) => {
    const section = el.closest('section');
    const table = el.closest('table');
    return `${section ? '#' + section.id : 'page'} ${table ? 'table#' + (table.id || '?') : el.tagName.toLowerCase()}`;
  };
  const wide = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) {
    wide.push(`page: ${doc.scrollWidth}px wide in a ${doc.clientWidth}px window`);
  }
  for (const el of document.querySelectorAll('table, figure, svg, img, pre')) {
    const parent = el.parentElement;
    const room = parent.clientWidth - px(parent, 'paddingLeft') - px(parent, 'paddingRight');
    const width = Math.max(el.getBoundingClientRect().width, el.scrollWidth || 0);
    if (width > room + 1) wide.push(`${where(el)}: ${Math.round(width)}px wide in ${Math.round(room)}px`);
  }
  const squeezed = [];
  const rule = document.createElement('style');  // a word's width, however the page lets it break
  rule.textContent =
    '.audit-probe, .audit-probe * { word-break: normal !important; overflow-wrap: normal !important; }';
  document.head.appendChild(rule);
  for (const cell of document.querySelectorAll('td, th')) {
    const text = cell.innerText.trim();
    if (!text || cell.querySelector('table')) continue;
    const probe = document.createElement('div');
    probe.className = 'audit-probe';
    probe.style.cssText = 'position:absolute;visibility:hidden;width:min-content;';
    probe.innerHTML = cell.innerHTML;
    cell.appendChild(probe);
    const longestWord = probe.getBoundingClientRect().width;
    probe.remove();
    const room = cell.clientWidth - px(cell, 'paddingLeft') - px(cell, 'paddingRight');
    const needed = Math.min(longestWord, minEm * px(cell, 'fontSize'));
    if (room + 1 < needed) squeezed.push(`${where(cell)}: "${text.slice(0, 40)}" in ${Math.round(room)}px`);
  }
  rule.remove();
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const text = walker.currentNode.textContent.trim();
    if (text) texts.push([where(walker.currentNode.parentElement), text]);
  }
  const images = [];
  for (const img of document.querySelectorAll('img')) {
    if (!img.complete || img.naturalWidth === 0) images.push(`img ${img.getAttribute('src')}: did not load`);
  }
  for (const svg of document.querySelectorAll('svg')) {
    const box = svg.getBoundingClientRect();
    if (box.width < 1 || box.height < 1 || svg.childElementCount === 0) images.push(`${where(svg)}: an empty plot`);
  }
  return {wide, squeezed, texts, images};
}"""


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def skip_reason() -> str | None:
    """Why a browser test cannot run here, or None when it can."""
    if importlib.util.find_spec("playwright") is None:
        return "the `playwright` package is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return "no system Chromium (apt-get install chromium; CI installs it): no browser is downloaded"
    return None


@dataclass
class PageAudit:
    sections: list[str]  # the ids of the <section>s visited, in page order
    console: list[str]  # console errors, uncaught exceptions and failed loads
    wide: list[str]  # tables, plots (or the page) wider than their container
    squeezed: list[str]  # table cells too narrow for their words
    reprs: list[str]  # text that is Python's spelling of a value (PYTHON_REPR)
    images: list[str]  # images that did not load, empty plots
    requests: list[str] = field(default_factory=list)  # every URL the page asked for

    def problems(self) -> list[str]:
        outside = [url for url in self.requests if not url.startswith(("file:", "data:"))]
        return [
            *(f"console: {line}" for line in self.console),
            *(f"too wide: {line}" for line in self.wide),
            *(f"squeezed: {line}" for line in self.squeezed),
            *(f"python repr: {line}" for line in self.reprs),
            *(f"image: {line}" for line in self.images),
            *(f"network: {url}" for url in outside),
        ]


def audit(page_path: Path, screenshot: Path | None = None) -> PageAudit:
    """Open `page_path` in headless Chromium and report what is broken on it (see PageAudit)."""
    from playwright.sync_api import sync_playwright

    binary = chromium_path()
    assert binary, skip_reason()
    console: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=binary, args=ARGS, timeout=TIMEOUT_MS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.set_default_timeout(TIMEOUT_MS)
            page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: console.append(f"uncaught: {error}"))
            page.on("requestfailed", lambda request: console.append(f"failed to load {request.url}"))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
            sections = page.eval_on_selector_all("section", "nodes => nodes.map(n => n.id)")
            for section_id in sections:  # each section scrolled into view: lazy content would load here
                page.locator(f"section#{section_id}").scroll_into_view_if_needed()
            found = page.evaluate(_MEASURE, MIN_CELL_EM)
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    reprs = [f"{where}: {text[:80]!r}" for where, text in found["texts"] if PYTHON_REPR.search(text)]
    return PageAudit(
        sections=sections,
        console=console,
        wide=found["wide"],
        squeezed=found["squeezed"],
        reprs=reprs,
        images=found["images"],
        requests=requests,
    )
