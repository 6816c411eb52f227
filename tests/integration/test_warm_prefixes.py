"""A warm prefix cache, as production has (issue 18 item 5), on the reference endpoint over
loopback: the log's earlier requests whose prefix blocks the sampled window reuses are picked
(sql/warm_prefixes.sql: within the look-back, the latest N) and sent first; the window's
cached_tokens hit rate is then higher than the same window's against a cold cache. The log is
built so that no window request shares a block with another, so the cold rate is exactly 0 and
the warm one a fixed share: deterministic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from pipeline.contracts import CANONICAL_LOG_SCHEMA
from pipeline.plan.replay_plan import build_plan, planned_requests
from pipeline.plan.warm_prefixes import send_warm_up, warm_prefix_rows, warm_up_plan
from pipeline.reference import ReferenceServer
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.spec.workload import Prompts, Replay

START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
HASHED = 2**63  # block ids are hashes (uint64): past int64's range, as in a real log
WINDOW = 6  # window requests; each reuses the block of one request sent before the window
PROMPTS = Prompts(prefix_block_tokens=32)


def _row(request_id: str, at: datetime, blocks: list[int], line: int) -> dict:
    return {
        "request_id": request_id,
        "arrival_at": at,
        "prompt_tokens": 80,
        "output_tokens": 2,
        "prefix_hashes": blocks,
        "source_file": "log.jsonl",
        "source_line": line,
    }


def _log(tmp_path: Path) -> tuple[Path, pa.Table]:
    """Earlier requests e_i (block HASHED+1000+i) from −50 s, one far back (−2 h, outside the
    look-back) and one unrelated, then the window: w_i with blocks [HASHED+1000+i, 5000+i]."""
    earlier = [
        _row(f"e{i}", START - timedelta(seconds=50 - i), [HASHED + 1000 + i, 9000 + i], i) for i in range(WINDOW)
    ]
    far = [_row("far", START - timedelta(hours=2), [HASHED + 1000, 7000], 99)]
    unrelated = [_row("other", START - timedelta(seconds=5), [8000], 98)]
    window = [
        _row(f"w{i}", START + timedelta(seconds=i), [HASHED + 1000 + i, 5000 + i], 100 + i) for i in range(WINDOW)
    ]
    logs = tmp_path / "production_logs.parquet"
    pq.write_table(pa.Table.from_pylist(far + earlier + unrelated + window, schema=CANONICAL_LOG_SCHEMA), logs)
    sample = pa.Table.from_pylist(window, schema=CANONICAL_LOG_SCHEMA)
    return logs, sample


def _profile(tmp_path: Path) -> str:
    fields = {
        "name": "warm",
        "prefill_ms_per_token": 0.001,
        "decode_ms_per_token": 0.05,
        "decode_slowdown_per_seq": 0.0,
        "max_running_seqs": 8,
        "kv_cache_tokens": 50000,
        "kv_block_tokens": 16,
        "prefix_cache": True,
    }
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(fields))
    return str(path)


def _window_hit_rate(tmp_path: Path, sample: pa.Table, warm_rows: list[dict], replay: Replay, name: str) -> float:
    plan = planned_requests(build_plan(sample, Replay(mode="concurrency", concurrency=1), PROMPTS))
    with ReferenceServer(_profile(tmp_path)) as server:
        target = Target("ref", server.base_url, "reference-model")
        if warm_rows:
            stats = send_warm_up(warm_up_plan(warm_rows, PROMPTS), target, replay, tmp_path / f"{name}-warm.jsonl")
            assert stats.sent == len(warm_rows) and stats.errors == 0
        with Journal(tmp_path / f"{name}.jsonl") as journal:
            run_replay(plan, target, ReplaySettings(mode="concurrency", concurrency=1), "run", journal)
    rows = journal_to_table(tmp_path / f"{name}.jsonl").to_pylist()
    assert len(rows) == WINDOW and all(r["status"] == "ok" for r in rows)
    return sum(r["cached_tokens"] for r in rows) / sum(r["prompt_tokens"] for r in rows)


def test_the_earlier_requests_picked_are_those_whose_blocks_the_window_reuses(tmp_path: Path) -> None:
    logs, sample = _log(tmp_path)
    assert warm_prefix_rows(logs, sample, Replay()) == []  # off by default
    rows = warm_prefix_rows(logs, sample, Replay(warm_prefixes=True, warm_prefixes_lookback_s=600))
    assert [r["request_id"] for r in rows] == [f"e{i}" for i in range(WINDOW)]  # not `far`, not `other`
    assert all(r["window_blocks"] == 1 for r in rows)
    capped = warm_prefix_rows(logs, sample, Replay(warm_prefixes=True, warm_prefixes_max_requests=2))
    assert [r["request_id"] for r in capped] == [f"e{WINDOW - 2}", f"e{WINDOW - 1}"]  # the latest two
    (request,) = warm_up_plan(rows[:1], PROMPTS)
    assert request.max_tokens == 1 and request.min_tokens is None and request.scheduled_offset_s is None


def test_a_warm_cache_gives_the_window_a_higher_hit_rate_than_a_cold_one(tmp_path: Path) -> None:
    logs, sample = _log(tmp_path)
    replay = Replay(warm_prefixes=True, warm_prefixes_lookback_s=600)
    rows = warm_prefix_rows(logs, sample, replay)
    cold = _window_hit_rate(tmp_path, sample, [], replay, "cold")
    warm = _window_hit_rate(tmp_path, sample, rows, replay, "warm")
    assert cold == 0.0 and warm > 0.2, (cold, warm)
    assert warm == _window_hit_rate(tmp_path, sample, rows, replay, "warm-again")  # deterministic
