"""`loadproof anonymize`: a production log → a shareable trace without its text.

The trace keeps what the load depends on and nothing a reader could tie to a customer: arrival
times (milliseconds since the first arrival), logged prompt and output lengths, logged latency
and TTFT, the structured-output flag, and salted hashes of the session, tenant and route and of
the prompt's prefix blocks (Mooncake-style `hash_ids`). Equal values hash equal under one salt,
so sessions (and their turn order: lines are in arrival order), tenant mixes and prefix sharing
survive; without the salt, a short value (a tenant name, a common opening message) cannot be
confirmed by hashing guesses. The salt comes from $LOADPROOF_ANONYMIZE_SALT (stable hashes across
runs, e.g. to join two months of traces) or is drawn per run; it is never written anywhere.

The log is read by the ingest itself (pipeline/workload/logs/ingest.py), so every format works
and bad lines are quarantined with their file and line exactly as a run would. The trace's
format is `loadproof_trace_jsonl` (sql/ingest_block_trace_fields.sql): Mooncake's
fields plus the ones Mooncake has no place for (session, tenant, route, latency, TTFT).

Prefix blocks are `block_tokens` tokens of the approximate tokenizer over the messages
(pipeline/tokens `message_tokens`), chained as the reference endpoint's prefix cache chains
them (pipeline/reference/prefix_cache.py): only full blocks, each id standing for the whole
prefix up to it. A log without text but with block ids (Mooncake) has its ids re-hashed.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.duck import connect as duck
from pipeline.spec.workload import LogSource
from pipeline.tokens import message_tokens, tokenize
from pipeline.workload.logs.ingest import ingest

SALT_ENV = "LOADPROOF_ANONYMIZE_SALT"
TRACE_FORMAT = "loadproof_trace_jsonl"
ID_MASK = (1 << 63) - 1  # ids fit a signed 64-bit integer: every JSON reader keeps them exact
BATCH_ROWS = 65_536


@dataclass
class AnonymizeResult:
    trace: Path
    files: list[str]
    accepted: int
    rejected: int
    salt_from_env: bool
    rejects: list[dict]  # the first few quarantined lines: source_file, source_line, reason (no raw text)


class Hasher:
    """Salted, keyed BLAKE2b for labels and prefix blocks. The key is derived from the salt so any
    salt length works and the salt itself is never an input that could be echoed."""

    def __init__(self, salt: str, block_tokens: int) -> None:
        self._key = hashlib.blake2b(salt.encode(), digest_size=32, person=b"loadproof-salt").digest()
        self.block_tokens = block_tokens

    def _digest(self, kind: bytes, data: bytes) -> bytes:
        return hashlib.blake2b(data, digest_size=8, key=self._key, person=kind).digest()

    def label(self, kind: str, value: str | None) -> str | None:
        """`t-…`/`r-…`/`s-…`: 64 bits, so ten million distinct sessions almost surely never collide."""
        if value is None:
            return None
        return f"{kind[0]}-{self._digest(kind.encode(), value.encode()).hex()}"

    def text_blocks(self, tokens: list[str]) -> list[int]:
        out: list[int] = []
        parent = b""
        for start in range(0, len(tokens) - self.block_tokens + 1, self.block_tokens):
            parent = self._digest(b"block", parent + "\x1f".join(tokens[start : start + self.block_tokens]).encode())
            out.append(int.from_bytes(parent, "big") & ID_MASK)
        return out

    def rehashed(self, ids: list[int]) -> list[int]:
        """A text-less log's own block ids (already chained), hashed again under the salt."""
        return [int.from_bytes(self._digest(b"block-id", str(i).encode()), "big") & ID_MASK for i in ids]

    def blocks(self, messages_json: str | None, prefix_hashes: list[int] | None) -> list[int]:
        """The prompt's block ids: from its text when the log has it, else from the log's ids.
        A text log's own prefix_hashes (unsalted hashes of whole messages) are never written."""
        if messages_json is None:
            return self.rehashed(prefix_hashes or [])
        try:
            parsed = json.loads(messages_json)
        except ValueError:
            parsed = messages_json  # a CSV column of plain prompt text
        if isinstance(parsed, list):
            return self.text_blocks(message_tokens([m for m in parsed if isinstance(m, dict)]))
        if isinstance(parsed, str):
            return self.text_blocks(tokenize(parsed))
        return []


def log_source(path: str | None, log_format: str, columns: list[str], dsn_env: str | None = None) -> LogSource:
    """The LogSource the CLI describes: a path, or `dsn_env` (a database table, as the spec's
    workload.log.dsn_env); `columns` as NAME=COLUMN pairs (csv/parquet mappings; NAME a
    ColumnMapping field, e.g. arrival=ts, arrival_unit=ms). Raises ValueError when invalid."""
    mapping: dict[str, str] = {}
    for pair in columns:
        name, sep, column = pair.partition("=")
        if not sep or not name.strip() or not column.strip():
            raise ValueError(f"--column wants NAME=COLUMN, got {pair!r}")
        mapping[name.strip()] = column.strip()
    return LogSource.model_validate(
        {"path": path, "format": log_format, "columns": mapping or None, "dsn_env": dsn_env}
    )


def salt_for_run() -> tuple[str, bool]:
    """($LOADPROOF_ANONYMIZE_SALT, True) when set, else (a fresh random salt, False)."""
    from_env = os.environ.get(SALT_ENV)
    if from_env:
        return from_env, True
    return secrets.token_hex(32), False


def anonymize(
    source: LogSource,
    base_dir: Path,
    trace_path: Path,
    block_tokens: int = 512,
    quarantine_path: Path | None = None,
    salt: str | None = None,
) -> AnonymizeResult:
    """Ingest `source`, then write its accepted rows to `trace_path` as loadproof_trace_jsonl.
    The quarantine (which holds the start of each bad line, text included) is kept only where
    `quarantine_path` says: it is for the log's owner, not for the trace's reader."""
    salt_from_env = False
    if salt is None:
        salt, salt_from_env = salt_for_run()
    hasher = Hasher(salt, block_tokens)
    with tempfile.TemporaryDirectory(prefix="loadproof-anonymize-") as folder:
        rows_path = Path(folder) / "rows.parquet"
        quarantine = quarantine_path or Path(folder) / "quarantine.parquet"
        stats = ingest(source, base_dir, rows_path, quarantine)
        rejects = pq.read_table(quarantine, columns=["source_file", "source_line", "reason"]).slice(0, 20)
        _write_trace(_trace_lines(rows_path, hasher), trace_path)
    return AnonymizeResult(trace_path, stats.files, stats.accepted, stats.rejected, salt_from_env, rejects.to_pylist())


def _trace_lines(rows_path: Path, hasher: Hasher) -> Iterator[str]:
    with duck.connection() as con:
        con.read_parquet(str(rows_path)).create_view("requests")
        reader = duck.run(con, "anonymize_rows").fetch_arrow_reader(BATCH_ROWS)
        for batch in reader:
            for row in batch.to_pylist():
                yield json.dumps(trace_record(row, hasher), separators=(",", ":"))


def trace_record(row: dict, hasher: Hasher) -> dict:
    """One trace line from one canonical row (anonymize_rows' columns); optional fields only when known."""
    record: dict = {
        "timestamp": row["offset_us"] / 1000,  # ms, exact to the microsecond the log was read at
        "input_length": row["prompt_tokens"],
        "output_length": row["output_tokens"],
        "hash_ids": hasher.blocks(row["messages_json"], row["prefix_hashes"]),
    }
    optional = {
        "session_id": hasher.label("session", row["session_id"]),
        "tenant": hasher.label("tenant", row["tenant"]),
        "route": hasher.label("route", row["route"]),
        "latency_ms": row["logged_latency_ms"],
        "ttft_ms": row["logged_ttft_ms"],
        "structured_output": row["structured_output"],
    }
    record.update({key: value for key, value in optional.items() if value is not None})
    return record


def _write_trace(lines: Iterator[str], path: Path) -> None:
    """Atomically: a reader never sees half a trace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")
    os.replace(partial, path)
