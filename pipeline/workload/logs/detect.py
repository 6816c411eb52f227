"""Which log format a file is in, found by the ingest itself (`loadproof init`).

There are no detection rules of their own to keep in step with the formats: the first lines of
the log's first file are ingested under every format of the registry (pipeline/workload/logs/
formats.py `FORMATS`) that needs no column mapping, and the format that accepts the most lines
wins (ties: fewer rejects, then the registry's order). A format that would need a mapping
(`csv`, `parquet`) is never guessed: the error says so, with the header's columns.
"""

from __future__ import annotations

import gzip
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from pydantic import ValidationError

from pipeline.spec.workload import LogSource
from pipeline.workload.logs.formats import FORMATS
from pipeline.workload.logs.ingest import IngestError, expand_paths, ingest

HEAD_LINES = 200  # enough lines for every format to show itself; a large log is not read twice


class UnknownLogFormat(IngestError):
    """No format the ingest knows reads the log; the message names the file, a line and each reason."""


@dataclass(frozen=True)
class FormatTrial:
    """One format tried on the log's first lines: how many it accepted, and its first reject."""

    format: str
    accepted: int
    rejected: int
    first_reject: str | None  # "line N: reason" (or the ingest's own error, e.g. a CSV header)


@dataclass(frozen=True)
class Detection:
    format: str
    file: str  # the file the format was detected on (a glob's first)
    lines_tried: int
    trials: tuple[FormatTrial, ...]


def detect_format(pattern: str, base_dir: Path) -> Detection:
    """The format of the log at `pattern` (a file or glob, relative to `base_dir`): the registry's
    format that accepts the most of its first file's first HEAD_LINES lines."""
    first = expand_paths(pattern, base_dir)[0]  # LogNotFound names the path
    if first.endswith(".parquet"):
        raise UnknownLogFormat(
            f"{first}: a Parquet log has no fixed columns; hint: write workload.log with format: parquet "
            "and columns: (arrival, prompt_tokens, output_tokens, ...), or pass --format parquet with --column"
        )
    with tempfile.TemporaryDirectory(prefix="loadproof-detect-") as folder:
        head, lines = _head(first, Path(folder), HEAD_LINES)
        trials = tuple(_trial(name, head, Path(folder)) for name in _mapping_free_formats())
    best = max(trials, key=lambda t: (t.accepted, -t.rejected))  # max keeps the first of equals: registry order
    if best.accepted == 0:
        by_reason: dict[str, list[str]] = {}  # one reason, every format that gave it, in the registry's order
        for trial in trials:
            by_reason.setdefault(trial.first_reject or "no request found", []).append(trial.format)
        reasons = "; ".join(f"{reason} ({', '.join(formats)})" for reason, formats in by_reason.items())
        raise UnknownLogFormat(
            f"{first}: no log format the ingest knows reads its first {lines} lines ({reasons}); hint: a CSV or "
            "Parquet log of your own needs a column mapping: pass --format csv with --column arrival=COL "
            "--column prompt_tokens=COL --column output_tokens=COL"
        )
    return Detection(best.format, first, lines, trials)


def _mapping_free_formats() -> list[str]:
    """The registry's formats a LogSource accepts without `columns` (the spec's own rule)."""
    names = []
    for name in FORMATS:
        try:
            LogSource.model_validate({"path": "log", "format": name})
        except ValidationError:
            continue
        names.append(name)
    return names


def _head(path: str, folder: Path, max_lines: int) -> tuple[Path, int]:
    """The first `max_lines` lines of `path` (gzip read transparently) in a file of the same suffix
    (a format's CSV export is told by its name); and how many lines that is."""
    name = Path(path).name.removesuffix(".gz")
    head = folder / f"head-{name}"
    opener = gzip.open if path.endswith(".gz") else open
    count = 0
    try:
        with opener(path, "rb") as source, head.open("wb") as target:
            for count, line in enumerate(source, start=1):
                target.write(line)
                if count == max_lines:
                    break
    except OSError as exc:  # unreadable, or a .gz that is not gzip
        raise IngestError(f"{path}: cannot read the log: {exc.strerror or exc}") from exc
    if count == 0:
        raise UnknownLogFormat(f"{path}: the log is empty; hint: point init at a log with requests in it")
    return head, count


def _trial(name: str, head: Path, folder: Path) -> FormatTrial:
    source = LogSource.model_validate({"path": str(head), "format": name})
    rows, quarantine = folder / f"{name}-rows.parquet", folder / f"{name}-quarantine.parquet"
    try:
        stats = ingest(source, folder, rows, quarantine)
    except IngestError as exc:  # e.g. a CSV header without the format's columns
        return FormatTrial(name, 0, 0, str(exc).replace(f"{head}:", "line ", 1).split("; columns:")[0])
    rejects = pq.read_table(quarantine, columns=["source_line", "reason"]).slice(0, 1).to_pylist()
    first = f"line {rejects[0]['source_line']}: {rejects[0]['reason']}" if rejects else None
    return FormatTrial(name, stats.accepted, stats.rejected, first)
