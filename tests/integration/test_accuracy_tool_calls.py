"""The labelled slice's `tool_call` and `json_schema` scorers against the reference endpoint, over
real HTTP: each item offers BFCL's real travel-booking tools (or asks for a JSON schema) and
names the tool it must call; the reply is judged by the production replay's own rule
(reply_validity, K2-Vendor-Verifier's) plus the right tool, and only the prediction is kept.
The `bad_tool_args` fault (a required argument dropped) lowers the accuracy; a `max_tokens` that
cuts the JSON answer does too. The accuracy comes out with its Wilson interval."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from pipeline.accuracy.calls import INVALID_CALL, INVALID_OUTPUT, NO_TOOL_CALL, WRONG_ARGUMENTS
from pipeline.accuracy.client import replay_slice
from pipeline.accuracy.labelled_slice import SliceError, load_slice, predictions_within_labels, score_replies
from pipeline.analysis.tabulate import tables
from pipeline.reference import ReferenceServer
from pipeline.reference.faults import FAULT_HEADER
from pipeline.replay.pacing.engine import Target
from pipeline.spec import Spec
from pipeline.spec.accuracy import AccuracySlice
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
TOOLS = bfcl_tools()
NAMES = [tool["function"]["name"] for tool in TOOLS]
INTENT = {
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
SECRET = "JFK-ONLY-IN-THE-LABEL"


def _named(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


def tool_items() -> list[dict]:
    """One item per BFCL tool, the tool forced by name (the reference calls it); six more where
    the model picks (`required`: the reference's seeded pick, mostly another tool); two where no
    call is wanted; one whose expected arguments the reference will not give."""
    items = [
        {
            "id": f"named-{name}",
            "text": f"Please use {name}.",
            "tool": name,
            "tools": TOOLS,
            "tool_choice": _named(name),
        }
        for name in NAMES
    ]
    items += [
        {"id": f"pick-{i}", "text": f"Request {i}: book me a flight.", "tool": NAMES[i], "tools": TOOLS}
        | {"tool_choice": "required"}
        for i in range(6)
    ]
    items += [
        {"id": f"none-{i}", "text": f"Just say hello {i}.", "tool": NO_TOOL_CALL, "tools": TOOLS, "tool_choice": "none"}
        for i in range(2)
    ]
    book = {"travel_to": SECRET}
    items.append(
        {"id": "args", "text": "Book it.", "tool": "book_flight", "tools": TOOLS, "tool_choice": _named("book_flight")}
        | {"arguments": book}
    )
    return items


def _write(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def tool_config(path: Path) -> AccuracySlice:
    return AccuracySlice.model_validate(
        {"path": str(path), "prompt_template": "{text}", "id_field": "id", "label_field": "tool"}
        | {"scorer": "tool_call", "arguments_field": "arguments", "max_tokens": 400, "concurrency": 4}
    )


def schema_config(path: Path, max_tokens: int = 400) -> AccuracySlice:
    return AccuracySlice.model_validate(
        {"path": str(path), "prompt_template": "{text}", "id_field": "id", "scorer": "json_schema"}
        | {"max_tokens": max_tokens, "concurrency": 4}
    )


def _scored(server, config: AccuracySlice, path: Path, fault: str | None = None) -> pa.Table:
    headers = ((FAULT_HEADER, fault),) if fault else ()
    target = Target("agent", server.base_url, "reference-model", extra_headers=headers)
    slice_table = load_slice(config, path)
    replies = replay_slice(slice_table.to_pylist(), target, config.max_tokens, config.concurrency, 10)
    return score_replies(config, slice_table, replies)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, pa.Table]:
    folder = tmp_path_factory.mktemp("slice_calls")
    (folder / "agent.yaml").write_text(yaml.safe_dump(PROFILE))
    calls = _write(folder / "calls.jsonl", tool_items())
    schemas = _write(
        folder / "schemas.jsonl",
        [{"id": f"s{i}", "text": f"Classify request {i}.", "response_format": INTENT} for i in range(12)],
    )
    with ReferenceServer(str(folder / "agent.yaml")) as server:
        return {
            "calls": _scored(server, tool_config(calls), calls),
            "spoiled": _scored(server, tool_config(calls), calls, fault="bad_tool_args"),
            "schemas": _scored(server, schema_config(schemas), schemas),
            "cut": _scored(server, schema_config(schemas, max_tokens=6), schemas),
        }


def _by_id(table: pa.Table) -> dict[str, dict]:
    return {row["item_id"]: row for row in table.to_pylist()}


def test_the_right_tool_and_valid_arguments_score_and_nothing_of_the_reply_is_kept(results):
    rows = _by_id(results["calls"])
    assert all(row["status"] == "ok" for row in rows.values())
    for name in NAMES:  # forced by name: the right tool, arguments valid against BFCL's schema
        assert (rows[f"named-{name}"]["predicted"], rows[f"named-{name}"]["correct"]) == (name, True)
    for i in range(6):  # the model's own pick: right only when it is the label's tool
        row = rows[f"pick-{i}"]
        assert row["predicted"] in NAMES and row["correct"] == (row["predicted"] == NAMES[i])
    assert [rows[f"none-{i}"]["predicted"] for i in range(2)] == [NO_TOOL_CALL] * 2  # finish reasons agree
    assert all(rows[f"none-{i}"]["correct"] for i in range(2))
    assert (rows["args"]["predicted"], rows["args"]["correct"]) == (WRONG_ARGUMENTS, False)
    assert all(row["reply"] is None for row in rows.values())  # no reply text, no arguments
    assert "arguments" not in results["calls"].schema.names and "tool_calls" not in results["calls"].schema.names


def test_tool_names_and_markers_are_not_reply_text(results, tmp_path: Path):
    path = _write(tmp_path / "calls.jsonl", tool_items())
    config = tool_config(path)
    withheld = predictions_within_labels(config, load_slice(config, path), results["spoiled"])
    assert withheld.column("predicted").to_pylist() == results["spoiled"].column("predicted").to_pylist()


def test_bad_tool_args_lower_the_score(results):
    clean, spoiled = _by_id(results["calls"]), _by_id(results["spoiled"])
    # BFCL's tools all require their first property, where they have one: dropped, the call is invalid
    invalid = [i for i, row in spoiled.items() if row["predicted"] == INVALID_CALL]
    assert len(invalid) >= 10 and all(clean[i]["predicted"] != INVALID_CALL for i in clean)
    assert sum(r["correct"] for r in spoiled.values()) < sum(r["correct"] for r in clean.values())


def test_a_json_schema_slice_validates_and_a_cut_answer_does_not(results):
    schemas, cut = results["schemas"].to_pylist(), results["cut"].to_pylist()
    assert [(r["label"], r["predicted"], r["correct"]) for r in schemas] == [("intent", "intent", True)] * 12
    assert [(r["predicted"], r["correct"]) for r in cut] == [(INVALID_OUTPUT, False)] * 12
    assert all(r["reply"] is None for r in schemas + cut)


def test_the_accuracy_comes_with_its_wilson_interval(results):
    spec = Spec.model_validate(demo_spec_dict())
    clean = tables.accuracy_summary(results["calls"], spec).to_pylist()[0]
    spoiled = tables.accuracy_summary(results["spoiled"], spec).to_pylist()[0]
    correct = sum(results["calls"].column("correct").to_pylist())
    assert (clean["scored"], clean["correct"]) == (27, correct)
    assert clean["accuracy"] == pytest.approx(correct / 27)
    assert clean["accuracy_ci_low"] < clean["accuracy"] < clean["accuracy_ci_high"]
    assert spoiled["accuracy_ci_high"] < clean["accuracy_ci_low"]  # the fault is told apart
    schemas = tables.accuracy_summary(results["schemas"], spec).to_pylist()[0]
    assert (schemas["accuracy"], schemas["accuracy_ci_high"]) == (1.0, 1.0) and schemas["accuracy_ci_low"] < 1.0
    by_label = tables.accuracy_by_label(results["spoiled"], spec).to_pylist()
    assert {row["predicted"] for row in by_label} >= {INVALID_CALL}


def test_items_that_cannot_be_scored_are_refused_with_their_line(tmp_path: Path):
    unknown = _write(tmp_path / "unknown.jsonl", [{"id": "a", "text": "x", "tool": "fly_me", "tools": TOOLS}])
    with pytest.raises(SliceError, match=r"unknown\.jsonl:1: label 'fly_me' is not one of the item's tools"):
        load_slice(tool_config(unknown), unknown)
    broken = [{"id": "a", "text": "x", "response_format": {**INTENT, "json_schema": {"schema": {"type": "thing"}}}}]
    path = _write(tmp_path / "broken.jsonl", broken)
    with pytest.raises(SliceError, match=r"broken\.jsonl:1: response_format: not a valid JSON schema"):
        load_slice(schema_config(path), path)
    with pytest.raises(ValueError, match="needs mode separate"):
        AccuracySlice.model_validate(
            {"path": "x.jsonl", "prompt_template": "{text}", "scorer": "json_schema"} | {"mode": "mixed"}
        )
    table = load_slice(tool_config(_write(tmp_path / "ok.jsonl", tool_items())), tmp_path / "ok.jsonl")
    assert json.loads(table.column("expected_json").to_pylist()[-1]) == {"travel_to": SECRET}
    assert json.loads(table.column("request_json")[0].as_py())["tool_choice"] == _named(NAMES[0])
