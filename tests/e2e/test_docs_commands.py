"""Every command in the docs runs: the `bash` blocks of the quick start (README.md's and
docs/quickstart.md's, the same block run once) and of every task page, in the docs' order, in one
shell, in a scratch folder, against the reference endpoint the quick start starts
(`loadproof serve-reference`). A renamed command, option, field or file fails here.

A block that cannot run in CI (a server that runs until stopped, an engine that compiles for 13
minutes, Kubernetes, a vendor's real key) carries `<!-- docs-test: skip (why) -->` on the line
before it; the skips are counted per page against `SKIPPED`, so a new one is a decision made here,
not a silent gap. The quick start keeps the run small (a 20 s window: the one `loadproof run` of
the docs, about a minute of the test's ~1.5); every other block reads the pack it wrote."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import REPO_ROOT

# the quick start first (every other page reads its pack), then the task pages in the nav's order
PAGES = (
    "README.md",
    "docs/quickstart.md",
    "docs/new-model-version.md",
    "docs/logs.md",
    "docs/claim.md",
    "docs/load.md",
    "docs/agents.md",
    "docs/real-engine.md",
    "docs/auditor.md",
    "docs/privacy.md",
    "docs/export.md",
    "docs/scaling.md",
    "docs/reading-the-pack.md",
    "docs/statistics.md",
    "docs/troubleshooting.md",
)
# pages whose shell blocks are not tutorials: benchmarks run for minutes to hours on purpose
NOT_TUTORIALS = {"docs/bench.md": "the benchmarks (minutes to hours each, on a quiet machine)"}
SKIPPED = {
    "README.md": 1,  # make demo / make test: the set-up itself (the suite this test is part of)
    "docs/new-model-version.md": 1,  # make dev: dagster dev runs until stopped
    "docs/real-engine.md": 1,  # make real-model / demo-real: compiles llama.cpp (~13 min)
}
SKIP_MARKER = re.compile(r"<!--\s*docs-test:\s*skip\b.*-->")
QUICK_START_PORT = "8100"  # the docs' port; the test runs on a free one


def shell_blocks(text: str) -> list[tuple[str, bool]]:
    """Each ```bash block of a Markdown text and whether a skip marker stands on the line before."""
    blocks: list[tuple[str, bool]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if lines[index].strip() == "```bash":
            before = next((line for line in reversed(lines[:index]) if line.strip()), "")
            end = lines.index("```", index + 1)
            blocks.append(("\n".join(lines[index + 1 : end]) + "\n", bool(SKIP_MARKER.search(before))))
            index = end
        index += 1
    return blocks


def docs_pages() -> set[str]:
    return {str(path.relative_to(REPO_ROOT)) for path in (REPO_ROOT / "docs").glob("*.md")}


def test_every_page_with_commands_is_run_or_named_and_the_skips_are_counted():
    with_blocks = {page for page in docs_pages() if shell_blocks((REPO_ROOT / page).read_text(encoding="utf-8"))}
    assert with_blocks <= set(PAGES) | set(NOT_TUTORIALS), with_blocks - set(PAGES) - set(NOT_TUTORIALS)
    skipped = {}
    for page in PAGES:
        count = sum(skip for _, skip in shell_blocks((REPO_ROOT / page).read_text(encoding="utf-8")))
        if count:
            skipped[page] = count
    assert skipped == SKIPPED


def test_the_block_reader_sees_a_skip_marker_only_right_before_a_block():
    text = "<!-- docs-test: skip (a server) -->\n```bash\nmake dev\n```\n\ntext\n\n```bash\nls\n```\n"
    assert shell_blocks(text) == [("make dev\n", True), ("ls\n", False)]


def free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


@pytest.mark.slow
def test_every_command_in_the_docs_runs(tmp_path):
    if shutil.which("curl") is None:
        pytest.skip("the quick start waits for the reference endpoint with curl, which is not installed")
    port = free_port()
    script = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    seen: set[str] = set()
    ran = 0
    for page in PAGES:
        for number, (block, skip) in enumerate(shell_blocks((REPO_ROOT / page).read_text(encoding="utf-8")), 1):
            if skip or block in seen:
                continue
            seen.add(block)
            ran += 1
            script += [f"echo '>>> {page} block {number}' >&2", block.replace(QUICK_START_PORT, port)]
    (tmp_path / "examples").symlink_to(REPO_ROOT / "examples")
    env = {key: value for key, value in os.environ.items() if key != "DAGSTER_HOME"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    failed_in = re.findall(r">>> (.*)", result.stderr)
    assert result.returncode == 0, (failed_in[-1:], result.stdout[-3000:], result.stderr[-3000:])
    assert ran >= 9 and len(failed_in) == ran
    assert "verified" in result.stdout and "azure_csv" in (tmp_path / "azure.yaml").read_text()
    assert (tmp_path / "out" / "mine" / "signature.json").is_file()
