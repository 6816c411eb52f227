"""Per-request cache hits over real HTTP on loopback (issue 18 item 4): a plan whose requests share a
long system prefix, replayed against the reference endpoint (prefix cache on), records each reply's
`usage.prompt_tokens_details.cached_tokens` in the raw timings through either HTTP client, and
sql/prefix_cache_hits.sql turns them into a non-zero hit rate; with the cache off, no hits are
reported and the rate is unknown (NULL), not 0."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from pipeline.analysis.statistics.steady_state import MIN_BINS
from pipeline.analysis.tabulate.tables import prefix_cache_hits
from pipeline.reference import ReferenceServer
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec import Spec
from tests.support.specs import demo_spec_dict

SHARED = " ".join(f"policy {i}: refunds for card {i % 7} go back to the account they came from." for i in range(40))


def _profile(tmp_path: Path, prefix_cache: bool) -> str:
    fields = {
        "name": "cache",
        "prefill_ms_per_token": 0.001,
        "decode_ms_per_token": 0.05,
        "decode_slowdown_per_seq": 0.0,
        "max_running_seqs": 8,
        "kv_cache_tokens": 50000,
        "prefix_cache": prefix_cache,
    }
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(fields))
    return str(path)


def _plan() -> list[PlannedRequest]:
    messages = [
        [{"role": "system", "content": SHARED}, {"role": "user", "content": f"question {i}: where is my refund?"}]
        for i in range(12)
    ]
    return [PlannedRequest(f"r{i}", i * 0.01, m, 3, 0) for i, m in enumerate(messages)]


def _spec() -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    return Spec.model_validate(data)


def _replay(tmp_path: Path, prefix_cache: bool, transport: str) -> pa.Table:
    with ReferenceServer(_profile(tmp_path, prefix_cache)) as server, Journal(tmp_path / "j.jsonl") as journal:
        stats = run_replay(
            _plan(),
            Target("ref", server.base_url, "reference-model"),
            # one request in flight at a time: each finds its predecessors' blocks cached whatever the
            # machine's load (at a fixed rate, a stalled server took the first few together: all misses)
            ReplaySettings(mode="concurrency", concurrency=1, transport=transport),
            "run",
            journal,
        )
    assert stats.sent == 12 and stats.errors == 0
    return journal_to_table(tmp_path / "j.jsonl")


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_cached_tokens_recorded_and_a_hit_rate_for_shared_prefixes(tmp_path: Path, transport: str) -> None:
    table = _replay(tmp_path, prefix_cache=True, transport=transport)
    rows = table.to_pylist()
    assert all(r["cached_tokens"] is not None and r["cached_tokens"] <= r["prompt_tokens"] for r in rows)
    assert sum(r["cached_tokens"] > 0 for r in rows) == 11  # every request after the first hits
    (hits,) = prefix_cache_hits(table, _spec()).to_pylist()
    # over the steady window: all 12 requests, or fewer where the tests trimmed a leading ramp
    # (a loaded machine can make the first few slower: pipeline/analysis/statistics/steady_state.py)
    assert MIN_BINS <= hits["requests_reporting"] == hits["requests_ok"] <= 12
    assert 0 < hits["cached_tokens"] <= sum(r["cached_tokens"] for r in rows)
    assert hits["cached_tokens"] < hits["prompt_tokens"] <= sum(r["prompt_tokens"] for r in rows)
    assert 0.5 < hits["hit_rate"] < 1  # the shared system prompt is most of every prompt


def test_no_hit_rate_where_the_server_reports_no_cached_tokens(tmp_path: Path) -> None:
    table = _replay(tmp_path, prefix_cache=False, transport="aiohttp")
    assert set(table.column("cached_tokens").to_pylist()) == {None}
    (hits,) = prefix_cache_hits(table, _spec()).to_pylist()
    assert (hits["requests_reporting"], hits["cached_tokens"], hits["hit_rate"]) == (0, 0, None)


def test_old_raw_timings_without_the_column_still_read(tmp_path: Path) -> None:
    """Raw timings written before `cached_tokens` existed: the view adds it as NULL."""
    table = _replay(tmp_path, prefix_cache=True, transport="aiohttp")
    path = tmp_path / "old.parquet"
    pq.write_table(table.drop_columns(["cached_tokens"]), path)
    (hits,) = prefix_cache_hits(path, _spec()).to_pylist()
    (with_column,) = prefix_cache_hits(table, _spec()).to_pylist()
    assert with_column["requests_reporting"] > 0  # the same rows, their cached tokens dropped
    assert (hits["requests_reporting"], hits["cached_tokens"], hits["hit_rate"]) == (0, 0, None)
    assert hits["requests_ok"] == with_column["requests_ok"]  # the same steady window
