"""The bill checked (sql/bill_check.sql, pipeline/analysis/tabulate/bill_check.py): billed vs counted
tokens per candidate — the server's usage against the client's own count — as ratios with
batch-means intervals, and the difference flagged beyond 1 % only when the counter is the
candidate's own tokenizer. Hand-built raw timings, real DuckDB."""

import json

import pyarrow as pa
import pytest

from pipeline.analysis.tabulate import tables as analysis_tables
from pipeline.analysis.tabulate.bill_check import BILL_TOLERANCE, counter_is_candidates_own
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.replay.recording.records import tool_definition_tokens
from pipeline.spec import Spec
from pipeline.tokens import count_tokens
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict

NOT_A_VERDICT = "not a bill verdict (approximate counter)"


def spec(tokenizer: str | None = "loadproof-approx", price: dict | None = None) -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    price = price or {"usd_per_million_input_tokens": 0.2, "usd_per_million_output_tokens": 0.6}
    data["candidates"] = [dict(data["candidates"][0], name="c", price=price, tokenizer=tokenizer)]
    data["workload"]["prompts"] = {**data["workload"].get("prompts", {}), "tokenizer": "loadproof-approx"}
    return Spec.model_validate(data)


def raw(prompt_factor: float = 1.0, output_factor: float = 1.0, without_usage: int = 0) -> pa.Table:
    """40 requests, 100 counted prompt tokens and 20 output tokens each; the server reports the
    counts times the factors (the first `without_usage` report none)."""
    rows = []
    for i in range(40):
        row = timing(f"q{i}", S + i * 250 * MS, 20 * MS, 400 * MS, tokens=20)
        row["prompt_tokens_client"] = 100 + i % 7
        row["prompt_tokens"] = round(row["prompt_tokens_client"] * prompt_factor)
        row["output_tokens"] = round(row["output_tokens_client"] * output_factor)
        if i < without_usage:
            row["prompt_tokens"], row["usage_reported"] = None, False
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA)


def checked(table: pa.Table, the_spec: Spec) -> dict:
    (row,) = analysis_tables.throughput(table, the_spec).to_pylist()
    return row


def test_an_honest_bill_is_within_tolerance():
    row = checked(raw(), spec())
    assert row["bill_counter"] == "loadproof-approx" and row["bill_counter_exact"]
    assert row["bill_requests"] == 40 and row["bill_tolerance"] == BILL_TOLERANCE
    for name in ("prompt_tokens", "output_tokens", "cost"):
        assert row[f"billed_to_counted_{name}"] == pytest.approx(1.0)
        assert row[f"billed_to_counted_{name}_ci_low"] == pytest.approx(1.0)
        assert row[f"billed_to_counted_{name}_ci_high"] == pytest.approx(1.0)
    assert row["bill_verdict"] == "within tolerance"


def test_inflated_prompt_tokens_are_flagged_over_billed_and_cost_more():
    row = checked(raw(prompt_factor=1.1), spec())
    assert row["billed_to_counted_prompt_tokens"] == pytest.approx(1.1, abs=0.01)
    assert row["billed_to_counted_prompt_tokens_ci_low"] > 1 + BILL_TOLERANCE
    assert row["billed_to_counted_output_tokens"] == pytest.approx(1.0)
    assert row["prompt_tokens_billed"] > row["prompt_tokens_counted"]
    # the token cost rises with the prompt share of the bill: 100 prompt at 0.2, 20 output at 0.6
    assert 1.0 < row["billed_to_counted_cost"] < 1.1
    assert row["bill_cost_billed_usd"] > row["bill_cost_counted_usd"]
    assert row["bill_verdict"] == "over-billed"


def test_a_bill_under_the_count_is_flagged_under_billed():
    row = checked(raw(output_factor=0.9), spec())
    assert row["billed_to_counted_output_tokens_ci_high"] < 1 - BILL_TOLERANCE
    assert row["bill_verdict"] == "under-billed"


def test_half_a_percent_is_within_tolerance():
    row = checked(raw(prompt_factor=1.005), spec())
    assert row["billed_to_counted_prompt_tokens"] > 1.0
    assert row["bill_verdict"] == "within tolerance"


def test_an_approximate_counter_reports_the_ratio_but_gives_no_verdict():
    row = checked(raw(prompt_factor=1.1), spec(tokenizer=None))
    assert not row["bill_counter_exact"]
    assert row["billed_to_counted_prompt_tokens"] == pytest.approx(1.1, abs=0.01)
    assert row["bill_verdict"] == NOT_A_VERDICT


def test_requests_without_usage_are_not_compared():
    row = checked(raw(without_usage=10), spec())
    assert row["bill_requests"] == 30
    assert row["billed_to_counted_prompt_tokens"] == pytest.approx(1.0)


def test_an_hourly_price_has_no_cost_ratio():
    row = checked(raw(prompt_factor=1.1), spec(price={"usd_per_hour": 3.6}))
    assert row["billed_to_counted_cost"] is None and row["bill_cost_billed_usd"] is None
    # no interval either (DuckDB's greatest() skips a NULL: `greatest(NULL - x, 0)` once gave a low end of 0)
    assert row["billed_to_counted_cost_ci_low"] is None and row["billed_to_counted_cost_ci_high"] is None
    assert row["bill_verdict"] == "over-billed"  # the usage is still wrong


@pytest.mark.parametrize(
    ("counter", "declared", "api", "own"),
    [
        ("loadproof-approx", "loadproof-approx", "chat", True),
        ("hf:tok", "hf:tok", "responses", True),
        ("hf:tok", None, "chat", False),  # the candidate never said which tokenizer it serves
        ("hf:tok", "hf:other", "chat", False),
        ("loadproof-approx", "loadproof-approx", "completions", False),  # no chat template sent
        ("server:c", "server:c", "chat", False),  # the reply is counted approximately
    ],
)
def test_which_counter_is_the_candidates_own(counter, declared, api, own):
    assert counter_is_candidates_own(counter, declared, api) is own


def test_the_offered_tools_are_counted_prompt_tokens():
    table = raw(prompt_factor=1.2)  # the server counted the tools' 20 tokens on top of the messages' 100
    table = table.set_column(
        table.schema.get_field_index("tool_definition_tokens"),
        "tool_definition_tokens",
        pa.array([row["prompt_tokens"] - row["prompt_tokens_client"] for row in table.to_pylist()], pa.int64()),
    )
    row = checked(table, spec())
    assert row["billed_to_counted_prompt_tokens"] == pytest.approx(1.0)
    assert row["bill_verdict"] == "within tolerance"


class Words:
    name = "words"

    def count_text(self, text: str) -> int:
        return len(text.split())


def test_a_tool_definition_is_counted_once_under_the_plans_tokenizer():
    tools = [{"type": "function", "function": {"name": "card_status", "parameters": {"type": "object"}}}]
    seen: dict[str, int] = {}
    assert (
        tool_definition_tokens(None, None, seen) is None and tool_definition_tokens({"tools": []}, None, seen) is None
    )
    approx = tool_definition_tokens({"tools": tools}, None, seen)
    assert approx == count_tokens(json.dumps(tools)) and len(seen) == 1
    assert tool_definition_tokens({"tools": tools, "seed": 1}, Words(), seen) == approx  # counted once
    assert tool_definition_tokens({"tools": tools[:0] + [dict(tools[0], x=1)]}, Words(), seen) == len(
        json.dumps([dict(tools[0], x=1)]).split()
    )
