"""Fuzzed production logs (hypothesis): random bytes and mutated good lines.

Whatever the lines, ingest either accounts for every non-blank line — accepted, or quarantined
with its file, line and a reason — or raises an IngestError naming the file. Never another
exception, never a line silently dropped.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.workload.logs import ingest_log
from pipeline.workload.logs.ingest import IngestError

pytestmark = pytest.mark.slow

GOOD_LINES = {
    "openai_jsonl": [
        b'{"id": "a", "timestamp": "2026-11-02T14:00:00.500Z", "tenant": "web", '
        b'"request": {"messages": [{"role": "user", "content": "hi"}]}, '
        b'"response": {"usage": {"prompt_tokens": 3, "completion_tokens": 7}}, "latency_ms": 120.5}',
        b'{"id": "b", "timestamp": "2026-11-02T14:00:01Z", '
        b'"response": {"usage": {"prompt_tokens": 9, "completion_tokens": 1}}}',
    ],
    "mooncake_jsonl": [
        b'{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}',
        b'{"timestamp": 1500, "input_length": 700, "output_length": 6, "hash_ids": [1, 3]}',
    ],
    "loadproof_trace_jsonl": [
        b'{"timestamp": 0.0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2], "session_id": "s-1", '
        b'"tenant": "t-2", "latency_ms": 900.5, "ttft_ms": 80.25, "structured_output": false}',
        b'{"timestamp": 1500.125, "input_length": 700, "output_length": 6, "hash_ids": []}',
    ],
    "azure_csv": [
        b"2023-11-16 18:15:46.6805900,374,44",
        b'2023-11-16 18:15:52.1,"5",3',
    ],
}
CSV_HEADER = b"TIMESTAMP,ContextTokens,GeneratedTokens"
BREAKS = b"\r\n"
SPECIALS = b'{}[]",:\\ \t\x00\xff\xc3-0123456789.eE'


def _no_breaks(data: bytes) -> bytes:
    """Line content only: the lines are joined with \\n by the test."""
    return bytes(b for b in data if b not in BREAKS)


line_bytes = st.binary(max_size=60).map(_no_breaks)
special_bytes = st.lists(st.sampled_from(list(SPECIALS)), max_size=8).map(bytes)


@st.composite
def mutated(draw, fmt: str) -> bytes:
    line = draw(st.sampled_from(GOOD_LINES[fmt]))
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(line)))
        end = draw(st.integers(start, min(len(line), start + 12)))
        line = line[:start] + draw(st.one_of(special_bytes, line_bytes)) + line[end:]
    return _no_breaks(line)


def log_lines(fmt: str):
    good = st.sampled_from(GOOD_LINES[fmt])
    return st.lists(
        st.one_of(good, mutated(fmt), line_bytes, st.sampled_from([b"", b"  ", b"\t"])), min_size=1, max_size=8
    )


def _non_blank(lines: list[bytes]) -> set[int]:
    """1-based numbers of lines with content (the SQL skips lines of only spaces, tabs and CRs)."""
    return {number for number, line in enumerate(lines, start=1) if line.strip(b" \t\r")}


def _check(tmp_path: Path, fmt: str, lines: list[bytes]) -> None:
    path = tmp_path / ("log.csv" if fmt == "azure_csv" else "log.jsonl")
    if fmt == "azure_csv":
        lines = [CSV_HEADER, *lines]
    path.write_bytes(b"\n".join(lines) + b"\n")
    try:
        result = ingest_log(path, fmt)
    except IngestError as exc:
        assert str(path) in str(exc)
        return
    expected = _non_blank(lines) - ({1} if fmt == "azure_csv" else set())
    accepted = result.rows.column("source_line").to_pylist()
    rejects = result.rejects.to_pylist()
    quarantined = [row["source_line"] for row in rejects]
    assert len(accepted) + len(quarantined) == len(expected), (accepted, rejects)
    assert set(accepted) | set(quarantined) == expected and not set(accepted) & set(quarantined)
    assert set(result.rows.column("source_file").to_pylist()) <= {str(path)}
    for row in rejects:
        assert row["source_file"] == str(path) and row["reason"], row


FUZZ = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("fmt", sorted(GOOD_LINES))
def test_fuzzed_log_lines_are_accounted_for_or_refused_with_the_file_named(tmp_path_factory, fmt: str) -> None:
    @FUZZ
    @given(lines=log_lines(fmt))
    def run(lines: list[bytes]) -> None:
        _check(tmp_path_factory.mktemp(fmt), fmt, lines)

    run()


def test_good_lines_are_accepted_so_the_fuzz_has_a_baseline(tmp_path: Path) -> None:
    for fmt, lines in GOOD_LINES.items():
        folder = tmp_path / fmt
        folder.mkdir()
        _check(folder, fmt, list(lines))
        result = ingest_log(folder / ("log.csv" if fmt == "azure_csv" else "log.jsonl"), fmt)
        assert result.rows.num_rows == len(lines) and result.rejects.num_rows == 0


def test_a_control_byte_inside_a_line_neither_cuts_nor_hides_it(tmp_path: Path) -> None:
    """Found by the fuzz: lines were read with \\x01 as delimiter, so `\\x01` alone vanished as a
    blank line and `<good line>\\x01junk` was accepted without its tail."""
    good = GOOD_LINES["azure_csv"][0]
    _check(tmp_path, "azure_csv", [b"\x01", good + b"\x01,9", good])
    result = ingest_log(tmp_path / "log.csv", "azure_csv")
    assert result.rows.column("source_line").to_pylist() == [4]
    assert sorted(row["source_line"] for row in result.rejects.to_pylist()) == [2, 3]
