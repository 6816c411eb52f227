"""The tool_call and json_schema scorers by hand: the right tool, the schema rule the production
replay uses (reply_validity), finish-reason agreement, expected arguments."""

from __future__ import annotations

import json

import pytest

from pipeline.accuracy.calls import (
    INVALID_CALL,
    INVALID_OUTPUT,
    NO_TOOL_CALL,
    WRONG_ARGUMENTS,
    ItemError,
    schema_item,
    score_json_schema,
    score_tool_call,
    tool_item,
)
from pipeline.accuracy.client import accuracy_body

FLY = {"type": "object", "properties": {"to": {"type": "string"}, "seats": {"type": "integer"}}, "required": ["to"]}
TOOLS = [
    {"type": "function", "function": {"name": "fly", "parameters": FLY}},
    {"type": "function", "function": {"name": "cancel", "parameters": {"type": "object"}}},
]
REQUEST = {"tools": TOOLS}
FIELDS = ("tools", "tool_choice", "arguments")


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": json.dumps(arguments)}


def test_the_right_tool_with_valid_arguments_is_correct():
    assert score_tool_call(REQUEST, [call("fly", to="JFK")], "tool_calls", "fly", None) == ("fly", True)
    assert score_tool_call(REQUEST, [call("cancel")], "tool_calls", "fly", None) == ("cancel", False)
    both = [call("fly", to="JFK"), call("cancel")]
    assert score_tool_call(REQUEST, both, "tool_calls", "fly", None) == ("fly + cancel", False)


def test_the_schema_rule_is_the_replays():
    assert score_tool_call(REQUEST, [call("fly", seats=2)], "tool_calls", "fly", None) == (INVALID_CALL, False)
    assert score_tool_call(REQUEST, [call("walk")], "tool_calls", "fly", None) == (INVALID_CALL, False)
    assert score_tool_call(REQUEST, [{"name": "fly", "arguments": '{"to": '}], "tool_calls", "fly", None)[1] is False
    assert score_tool_call(REQUEST, [], "tool_calls", "fly", None) == (INVALID_CALL, False)


def test_finish_reasons_must_agree():
    assert score_tool_call(REQUEST, [], "stop", "fly", None) == (NO_TOOL_CALL, False)
    assert score_tool_call(REQUEST, [], "stop", NO_TOOL_CALL, None) == (NO_TOOL_CALL, True)
    assert score_tool_call(REQUEST, [call("fly", to="JFK")], "tool_calls", NO_TOOL_CALL, None)[1] is False


def test_expected_arguments_are_each_checked_and_others_ignored():
    given = [call("fly", to="JFK", seats=2)]
    assert score_tool_call(REQUEST, given, "tool_calls", "fly", {"to": "JFK"}) == ("fly", True)
    assert score_tool_call(REQUEST, given, "tool_calls", "fly", {"to": "SFO"}) == (WRONG_ARGUMENTS, False)
    assert score_tool_call(REQUEST, given, "tool_calls", "fly", {"class": "economy"}) == (WRONG_ARGUMENTS, False)


def test_json_schema_replies_validate_or_are_invalid():
    request, name = schema_item({"type": "json_schema", "json_schema": {"name": "trip", "schema": FLY}}, "rf")
    assert name == "trip"
    assert score_json_schema(request, '{"to": "JFK"}', "trip") == ("trip", True)
    assert score_json_schema(request, '{"seats": 1}', "trip") == (INVALID_OUTPUT, False)
    assert score_json_schema(request, '{"to": "J', "trip") == (INVALID_OUTPUT, False)
    assert schema_item({"type": "json_object"}, "rf")[1] == "json_object"


def test_items_are_checked_where_they_are_loaded():
    assert tool_item(TOOLS, "required", "fly", {"to": "JFK"}, FIELDS) == {"tools": TOOLS, "tool_choice": "required"}
    with pytest.raises(ItemError, match="not one of the item's tools"):
        tool_item(TOOLS, None, "walk", None, FIELDS)
    with pytest.raises(ItemError, match="non-empty list"):
        tool_item([], None, "fly", None, FIELDS)
    bad = [{"type": "function", "function": {"name": "fly", "parameters": {"type": 3}}}]
    with pytest.raises(ItemError, match="parameters are not a valid schema"):
        tool_item(bad, None, "fly", None, FIELDS)
    with pytest.raises(ItemError, match="a JSON object"):
        tool_item(TOOLS, None, "fly", ["JFK"], FIELDS)
    with pytest.raises(ItemError, match="type json_schema with a schema"):
        schema_item({"type": "text"}, "rf")


def test_the_request_carries_the_items_fields_under_ours():
    body = accuracy_body("m", [], 400, {"tools": TOOLS, "tool_choice": "required", "max_tokens": 1, "model": "x"})
    assert (body["model"], body["max_tokens"], body["tool_choice"], body["stream"]) == ("m", 400, "required", False)
