"""The bill check over real HTTP: an honest reference endpoint and one that over-bills
(`overbill`: usage.prompt_tokens inflated 10 %), replayed, then analysed. The check flags the
over-billing endpoint and passes the honest one when the counter is the candidate's own tokenizer
(loadproof-approx is the reference endpoint's), and only reports the ratios when it is not."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.analysis.tabulate import tables as analysis_tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.reference import ReferenceServer
from pipeline.reference.faults import FAULT_HEADER
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec import Spec
from pipeline.tokens import count_message_tokens
from tests.support.specs import demo_spec_dict

QUESTIONS = [
    "Is my transfer to Spain still pending?",
    "Why was my card declined at the airport, twice, yesterday evening?",
    "How do I change the PIN of my new card?",
    "Can I get a refund for a duplicate charge from a hotel in Lisbon?",
]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "card_status",
            "description": "The status of one of the customer's cards",
            "parameters": {"type": "object", "properties": {"last_four": {"type": "string"}}, "required": []},
        },
    }
]


def _replay(tmp_path: Path, server: ReferenceServer, candidate: str, fault: str | None) -> pa.Table:
    plan = []
    for i in range(40):
        messages = [{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)] + f" (case {i})"}]
        fields = {"tools": TOOLS} if i % 3 == 0 else None  # the tools' definitions are prompt tokens too
        plan.append(
            PlannedRequest(
                f"{candidate}-{i}", None, messages, 8 + i % 5, count_message_tokens(messages), request_fields=fields
            )
        )
    headers = ((FAULT_HEADER, fault),) if fault else ()
    target = Target(candidate, server.base_url, "reference-model", extra_headers=headers)
    with Journal(tmp_path / f"{candidate}.jsonl") as journal:
        run_replay(plan, target, ReplaySettings(mode="concurrency", concurrency=4), "run-bill", journal)
    return journal_to_table(journal.path).select(RAW_TIMING_RECORD_SCHEMA.names).cast(RAW_TIMING_RECORD_SCHEMA)


def _spec(tokenizer: str | None) -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["workload"]["prompts"] = {**data["workload"].get("prompts", {}), "tokenizer": "loadproof-approx"}
    price = {"usd_per_million_input_tokens": 0.2, "usd_per_million_output_tokens": 0.6}
    base = data["candidates"][0]
    data["candidates"] = [dict(base, name=name, price=price, tokenizer=tokenizer) for name in ("honest", "overbilling")]
    return Spec.model_validate(data)


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> pa.Table:
    folder = tmp_path_factory.mktemp("bill")
    with ReferenceServer("zero") as server:
        return pa.concat_tables(
            [_replay(folder, server, "honest", None), _replay(folder, server, "overbilling", "overbill")]
        )


def test_the_bill_check_flags_the_over_billing_endpoint_and_passes_the_honest_one(raw):
    rows = {r["candidate"]: r for r in analysis_tables.throughput(raw, _spec("loadproof-approx")).to_pylist()}
    honest, overbilling = rows["honest"], rows["overbilling"]
    offered = [r for r in raw.to_pylist() if r["tool_definition_tokens"] is not None]
    assert len(offered) == 28 and all(r["tool_definition_tokens"] > 20 for r in offered)
    assert honest["bill_requests"] == overbilling["bill_requests"] == 40
    assert honest["billed_to_counted_prompt_tokens"] == pytest.approx(1.0)
    assert honest["billed_to_counted_output_tokens"] == pytest.approx(1.0)
    assert honest["bill_verdict"] == "within tolerance"
    assert overbilling["billed_to_counted_prompt_tokens"] == pytest.approx(1.1, abs=0.02)
    assert overbilling["billed_to_counted_prompt_tokens_ci_low"] > 1.01
    assert overbilling["billed_to_counted_cost"] > 1.01
    assert overbilling["bill_verdict"] == "over-billed"


def test_without_the_candidates_own_tokenizer_the_ratio_is_shown_but_not_judged(raw):
    rows = {r["candidate"]: r for r in analysis_tables.throughput(raw, _spec(None)).to_pylist()}
    assert rows["overbilling"]["billed_to_counted_prompt_tokens"] == pytest.approx(1.1, abs=0.02)
    assert {r["bill_verdict"] for r in rows.values()} == {"not a bill verdict (approximate counter)"}
