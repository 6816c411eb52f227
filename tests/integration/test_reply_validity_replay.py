"""Tool-call schema accuracy and structured-output validity measured on the replay's own replies:
the reference endpoint (a reasoning profile) answers BFCL's real travel-booking tools and a JSON
schema; the raw timings carry one flag per reply — valid, or (with the `bad_tool_args` fault, a
required argument dropped) invalid — and never the calls' text; the analysis turns the flags
into tool_call_schema_accuracy and structured_output_valid_rate with Wilson intervals."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from pipeline.analysis.tabulate import tables as analysis_tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.reference import ReferenceServer
from pipeline.reference.faults import FAULT_HEADER
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec import Spec
from tests.support.field_files import bfcl_tools
from tests.support.specs import demo_spec_dict

PROFILE = {
    "name": "agent",
    "prefill_ms_per_token": 0,
    "decode_ms_per_token": 0.2,
    "decode_slowdown_per_seq": 0,
    "max_running_seqs": 64,
    "reasoning": {"tokens": 4},
    "seed": 0,
}
MESSAGES = [{"role": "user", "content": "Book me a flight from SFO to JFK next Monday, economy."}]
TOOL_FIELDS = {"tools": bfcl_tools(), "tool_choice": "required", "temperature": 0.2}
SCHEMA_FIELDS = {
    "response_format": {
        "type": "json_schema",
        "json_schema": {
            "name": "intent",
            "schema": {
                "type": "object",
                "properties": {"intent": {"type": "string", "enum": ["book", "cancel"]}, "urgent": {"type": "boolean"}},
                "required": ["intent", "urgent"],
            },
        },
    }
}


def _plan(fields: dict, count: int, prefix: str) -> list[PlannedRequest]:
    return [PlannedRequest(f"{prefix}{i}", i * 0.01, MESSAGES, 400, 20, request_fields=fields) for i in range(count)]


def _replay(server, tmp_path: Path, plan: list[PlannedRequest], name: str, fault: str | None = None) -> pa.Table:
    headers = ((FAULT_HEADER, fault),) if fault else ()
    target = Target("agent", server.base_url, "reference-model", extra_headers=headers)
    with Journal(tmp_path / f"{name}.jsonl") as journal:
        run_replay(plan, target, ReplaySettings(request_timeout_s=10), name, journal)
    return journal_to_table(tmp_path / f"{name}.jsonl")


@pytest.fixture(scope="module")
def replies(tmp_path_factory) -> dict[str, pa.Table]:
    folder = tmp_path_factory.mktemp("validity")
    (folder / "agent.yaml").write_text(yaml.safe_dump(PROFILE))
    with ReferenceServer(str(folder / "agent.yaml")) as server:
        return {
            "tools": _replay(server, folder, _plan(TOOL_FIELDS, 12, "t"), "tools"),
            "schema": _replay(server, folder, _plan(SCHEMA_FIELDS, 12, "s"), "schema"),
            "spoiled": _replay(server, folder, _plan(TOOL_FIELDS, 12, "b"), "spoiled", fault="bad_tool_args"),
        }


def test_every_reply_carries_its_flag_and_never_its_text(replies):
    tools, schema, spoiled = (replies[k].to_pylist() for k in ("tools", "schema", "spoiled"))
    assert all(r["status"] == "ok" and r["finish_reason"] == "tool_calls" and r["tool_calls"] == 1 for r in tools)
    assert [r["tool_call_valid"] for r in tools] == [True] * 12
    assert [r["structured_output_valid"] for r in tools] == [None] * 12  # no schema asked
    assert [r["structured_output_valid"] for r in schema] == [True] * 12
    assert [r["tool_call_valid"] for r in schema] == [None] * 12  # no tools offered
    # BFCL's tools all require their first property, where they have one: dropped, the call is invalid
    invalid = [r["tool_call_valid"] for r in spoiled]
    assert invalid.count(False) >= 10 and None not in invalid
    assert all(r["reasoning_tokens"] == 4 and r["ttfo_ms"] >= r["ttft_ms"] for r in tools + schema)
    assert all(r["reply_text"] is None for r in tools + schema + spoiled)  # production replies: no text kept


def test_the_analysis_makes_the_two_figures_with_wilson_intervals(replies):
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["candidates"] = [dict(data["candidates"][0], name="agent")]
    spec = Spec.model_validate(data)
    raw = pa.concat_tables([replies[k].select(RAW_TIMING_RECORD_SCHEMA.names) for k in ("tools", "spoiled", "schema")])
    (row,) = analysis_tables.throughput(raw, spec).to_pylist()
    valid = replies["spoiled"].column("tool_call_valid").to_pylist().count(True)
    assert row["tool_call_replies"] == 24 and row["tool_call_replies_valid"] == 12 + valid
    assert row["tool_call_schema_accuracy"] == pytest.approx((12 + valid) / 24)
    assert (
        row["tool_call_schema_accuracy_ci_low"]
        < row["tool_call_schema_accuracy"]
        < row["tool_call_schema_accuracy_ci_high"]
    )
    assert (row["structured_replies"], row["structured_output_valid_rate"]) == (12, 1.0)
    assert row["structured_output_valid_rate_ci_high"] == 1.0 and row["structured_output_valid_rate_ci_low"] < 1.0
    assert row["reasoning_tokens_per_request"] == pytest.approx(4.0)
