"""Accuracy mixed into the load (`accuracy.mode: mixed`): the labelled items placed in the replay
plan, sent among the production requests, their replies (and only theirs) kept and scored."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from pipeline.accuracy.labelled_slice import load_slice
from pipeline.cli import app
from pipeline.contracts import REPLAY_PLAN_SCHEMA
from pipeline.plan.accuracy import labelled_offsets, labelled_positions, mix_into_plan
from pipeline.plan.replay_plan import planned_requests
from pipeline.privacy import private_root
from pipeline.quality import expectations
from pipeline.reference import ReferenceServer
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec.accuracy import AccuracySlice
from tests.support.specs import DEMO_SLICE, demo_spec_dict, small_spec

MESSAGES = [{"role": "user", "content": "Why was my card declined at the shop today?"}]


def config(**overrides) -> AccuracySlice:
    data = {**demo_spec_dict()["accuracy"], "max_items": 3, "mode": "mixed", **overrides}
    return AccuracySlice.model_validate(data)


def production_plan(offsets: list[float | None]) -> pa.Table:
    rows = [
        {
            "request_id": f"q{i}",
            "scheduled_offset_s": offset,
            "messages_json": json.dumps(MESSAGES),
            "max_tokens": 8,
            "prompt_source": "logged",
            "tokenizer": "loadproof-approx",
            "prompt_tokens_logged": 12,
            "prompt_tokens_client": 12,
            "prompt_tokens_error": 0,
            "source_line": i + 1,
        }
        for i, offset in enumerate(offsets)
    ]
    return pa.Table.from_pylist(rows, schema=REPLAY_PLAN_SCHEMA)


def test_even_placement_by_hand():
    # production offsets 0..9 s (span 9 s), three items: at 0 + (k + ½)·9/3 = 1.5, 4.5, 7.5 s
    assert labelled_offsets([float(i) for i in range(10)], 3, "even", 0) == [1.5, 4.5, 7.5]
    cfg = config()
    plan = mix_into_plan(production_plan([float(i) for i in range(10)]), load_slice(cfg, DEMO_SLICE), cfg)
    rows = plan.to_pylist()
    frame = plan.to_pandas()
    frame["context_tokens"] = frame["prompt_tokens_client"] + frame["max_tokens"]
    assert plan.num_rows == 13
    assert expectations.validate(
        expectations.replay_plan_suite, frame, {"max_context_tokens": None}, name="replay_plan"
    ).passed
    labelled = [(i, r["scheduled_offset_s"], r["request_id"]) for i, r in enumerate(rows) if r["labelled_item_id"]]
    items = load_slice(cfg, DEMO_SLICE).column("item_id").to_pylist()
    # 1.5 s goes after q0, q1 (index 2); 4.5 s after q0..q4 and the first item (index 6); 7.5 s at 10
    assert labelled == [
        (2, 1.5, f"labelled:{items[0]}"),
        (6, 4.5, f"labelled:{items[1]}"),
        (10, 7.5, f"labelled:{items[2]}"),
    ]
    first = rows[2]
    assert (first["prompt_source"], first["max_tokens"], first["min_tokens"]) == ("labelled", cfg.max_tokens, None)
    assert json.loads(first["messages_json"]) == json.loads(
        load_slice(cfg, DEMO_SLICE).column("messages_json")[0].as_py()
    )
    assert [r["labelled_item_id"] for r in rows if not r["request_id"].startswith("labelled:")] == [None] * 10
    assert planned_requests(plan)[2].labelled_item_id == items[0]


def test_random_placement_is_seeded_and_inside_the_span():
    offsets = [float(i) for i in range(10)]
    drawn = labelled_offsets(offsets, 50, "random", 7)
    assert drawn == labelled_offsets(offsets, 50, "random", 7) != labelled_offsets(offsets, 50, "random", 8)
    assert drawn == sorted(drawn) and drawn[0] >= 0.0 and drawn[-1] <= 9.0


def test_closed_loop_interleaves_by_position():
    # no offsets (mode concurrency): 3 items among 9 requests go before production index
    # int((k + ½)·9/3) = 1, 4, 7
    assert labelled_positions(9, 3) == [1, 4, 7]
    cfg = config()
    plan = mix_into_plan(production_plan([None] * 9), load_slice(cfg, DEMO_SLICE), cfg)
    ids = plan.column("request_id").to_pylist()
    assert [i for i, rid in enumerate(ids) if rid.startswith("labelled:")] == [1, 5, 9]
    assert [rid for rid in ids if not rid.startswith("labelled:")] == [f"q{i}" for i in range(9)]


def test_a_request_id_clash_is_refused():
    cfg = config(max_items=1)
    item = load_slice(cfg, DEMO_SLICE).column("item_id")[0].as_py()
    plan = production_plan([0.0]).to_pylist()
    plan[0]["request_id"] = f"labelled:{item}"
    with pytest.raises(ValueError, match="already has a request id"):
        mix_into_plan(pa.Table.from_pylist(plan, schema=REPLAY_PLAN_SCHEMA), load_slice(cfg, DEMO_SLICE), cfg)


def test_the_engine_keeps_the_reply_text_of_labelled_requests_only(tmp_path: Path, zero_server):
    requests = [
        PlannedRequest("q0", 0.0, MESSAGES, 8, 12),
        PlannedRequest("labelled:7", 0.01, MESSAGES, 8, 12, labelled_item_id="7"),
        PlannedRequest("q1", 0.02, MESSAGES, 8, 12),
    ]
    with Journal(tmp_path / "journal.jsonl") as journal:
        run_replay(requests, Target("ref", zero_server.base_url, "reference-model"), ReplaySettings(), "run", journal)
    rows = {r["request_id"]: r for r in journal_to_table(journal.path).to_pylist()}
    assert rows["labelled:7"]["labelled_item_id"] == "7" and rows["labelled:7"]["status"] == "ok"
    assert rows["labelled:7"]["reply_text"] and rows["labelled:7"]["output_tokens_client"] == 8
    assert (rows["q0"]["reply_text"], rows["q1"]["reply_text"]) == (None, None)
    assert (rows["q0"]["labelled_item_id"], rows["q1"]["labelled_item_id"]) == (None, None)


# A run of its own, not the shared demo pack (tests/e2e/conftest.py): `accuracy.mode: mixed` puts
# the labelled items into the load plan; the demo pack scores them in a separate pass.
@pytest.mark.slow
def test_a_mixed_spec_scores_every_item_from_the_load_replay(tmp_path: Path, write_spec, monkeypatch):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    oracle = tmp_path / "oracle.yaml"
    oracle.write_text(f"answer_key: {DEMO_SLICE}\naccuracy: 1.0\n")
    with ReferenceServer("zero", oracle=str(oracle)) as server:
        spec = Path(small_spec(write_spec, server.base_url))
        data = yaml.safe_load(spec.read_text())
        data["accuracy"].update(mode="mixed", max_items=12)
        spec.write_text(yaml.safe_dump(data, sort_keys=False))
        out = tmp_path / "pack"
        result = CliRunner().invoke(app, ["run", str(spec), "--out", str(out)])
        assert result.exit_code == 0, result.output
    assert "checks failed: none" in result.output
    data_dir = out / "data"
    items = pq.read_table(data_dir / "labelled_slice.parquet").column("item_id").to_pylist()
    results = pq.read_table(data_dir / "accuracy_results.parquet").to_pylist()
    assert sorted(r["item_id"] for r in results) == sorted(items) and len(items) == 12
    assert all(r["status"] == "ok" and r["correct"] for r in results)  # the oracle answers every item right

    plan = pq.read_table(data_dir / "replay_plan.parquet").to_pylist()
    planned = {r["request_id"]: r["scheduled_offset_s"] for r in plan}
    labelled_plan = [r for r in plan if r["labelled_item_id"]]
    assert sorted(r["labelled_item_id"] for r in labelled_plan) == sorted(items)
    production = [r["scheduled_offset_s"] for r in plan if not r["labelled_item_id"]]
    assert all(min(production) < r["scheduled_offset_s"] < max(production) for r in labelled_plan)

    timings = pq.read_table(data_dir / "raw_timings.parquet").to_pylist()
    # every request, labelled or not, was scheduled on one timeline at its planned offset
    starts = {r["t_scheduled_ns"] - round(planned[r["request_id"]] * 1e9) for r in timings}
    assert max(starts) - min(starts) <= 1  # ns rounding of the float offset
    assert {r["request_id"] for r in timings} == set(planned)
    assert all(r["reply_text"] is None for r in timings)  # withheld from the pack (privacy.text: hash)
    # the replies were kept (labelled requests only) in the private folder beside the pack, and scored there
    [private_timings] = private_root(out).glob("candidates/*/*/data/raw_timings.parquet")
    kept = pq.read_table(private_timings).to_pylist()
    assert all((r["reply_text"] is not None) == (r["labelled_item_id"] is not None) for r in kept)

    # the load figures count production requests only
    ttft = next(
        r
        for r in pq.read_table(data_dir / "latency_percentiles.parquet").to_pylist()
        if r["metric"] == "ttft_ms" and r["scope"] == "all" and r["percentile"] == "p50"
    )
    throughput = pq.read_table(data_dir / "throughput.parquet").to_pylist()[0]
    assert throughput["requests_planned"] == len(plan) - len(items)
    assert ttft["n"] == throughput["requests_ok"]
    verified = CliRunner().invoke(app, ["verify", str(out)])
    assert verified.exit_code == 0, verified.output
