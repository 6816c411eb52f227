"""The scorers of an agent's reply to a labelled item that offers tools (`tool_call`) or asks for
a JSON schema (`json_schema`): the item carries its request's fields, the reply is judged by the
production replay's own rule (`pipeline.replay.reading.reply_validity`, K2-Vendor-Verifier's), and only
the prediction and whether it is right are kept — never the reply's text nor its arguments.

- tool_call: the label is the tool the reply must call. A reply that does not finish with
  `tool_calls` predicts `(no tool call)` (a label of `(no tool call)` expects exactly that:
  K2-Vendor-Verifier's finish-reason agreement); one whose calls fail the schema rule (a tool not
  offered, arguments that do not parse or validate) predicts `(invalid call)`; otherwise it
  predicts the tool(s) it called (`a + b` for several). With expected arguments, a call of the
  right tool whose arguments lack one of them, or give it another value, predicts
  `(wrong arguments)`; arguments the label does not name are not checked.
- json_schema: the label names the schema (default: its `name`); a reply that validates predicts
  it, one that does not predicts `(invalid output)`.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.replay.reading.reply_validity import schema_problem, structured_output_valid, tool_call_valid

NO_TOOL_CALL = "(no tool call)"
INVALID_CALL = "(invalid call)"
WRONG_ARGUMENTS = "(wrong arguments)"
INVALID_OUTPUT = "(invalid output)"
CALL_MARKERS = (NO_TOOL_CALL, INVALID_CALL, WRONG_ARGUMENTS, INVALID_OUTPUT)


class ItemError(ValueError):
    """An item whose request fields cannot be used; the message names the field."""


def tool_item(tools: Any, tool_choice: Any, label: str, arguments: Any, fields: tuple[str, str, str]) -> dict:
    """The request fields of a tool_call item (`tools`, `tool_choice`), checked: function tools
    with names and valid parameter schemas, a label that is one of them (or `(no tool call)`)."""
    tools_field, choice_field, arguments_field = fields
    if not isinstance(tools, list) or not tools:
        raise ItemError(f"{tools_field}: a tool_call item needs a non-empty list of tools")
    names = []
    for number, tool in enumerate(tools, start=1):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ItemError(f"{tools_field}: tool {number} is not a function tool with a name")
        problem = schema_problem(function.get("parameters") or {"type": "object"})
        if problem:
            raise ItemError(f"{tools_field}: tool {function['name']!r}: parameters are not a valid schema: {problem}")
        names.append(function["name"])
    if label != NO_TOOL_CALL and label not in names:
        raise ItemError(f"label {label!r} is not one of the item's tools (nor {NO_TOOL_CALL})")
    if arguments is not None and not isinstance(arguments, dict):
        raise ItemError(f"{arguments_field}: expected arguments must be a JSON object")
    request: dict[str, Any] = {"tools": tools}
    if tool_choice is not None:
        if not isinstance(tool_choice, str | dict):
            raise ItemError(f"{choice_field}: a string or an object")
        request["tool_choice"] = tool_choice
    return request


def schema_item(response_format: Any, field: str) -> tuple[dict, str]:
    """The request fields of a json_schema item and the schema's name (the default label)."""
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "json_object":
        return {"response_format": response_format}, "json_object"
    spec = response_format.get("json_schema") if kind == "json_schema" else None
    schema = spec.get("schema") if isinstance(spec, dict) else None
    if not isinstance(schema, dict):
        raise ItemError(f"{field}: a json_schema item needs a response_format of type json_schema with a schema")
    problem = schema_problem(schema)
    if problem:
        raise ItemError(f"{field}: not a valid JSON schema: {problem}")
    return {"response_format": response_format}, str(spec.get("name") or "json_schema")  # type: ignore[union-attr]


def _has_arguments(call: dict, expected: dict) -> bool:
    try:
        given = json.loads(call.get("arguments") or "")
    except ValueError:
        return False
    return isinstance(given, dict) and all(name in given and given[name] == value for name, value in expected.items())


def score_tool_call(
    request: dict, calls: list[dict], finish_reason: str | None, label: str, expected: dict | None
) -> tuple[str, bool]:
    """(predicted, correct) of a reply's tool calls (each call's `name` and `arguments` text)."""
    valid = tool_call_valid(request, calls, finish_reason)
    if valid is None:
        predicted = NO_TOOL_CALL
    elif not valid:
        predicted = INVALID_CALL
    else:
        predicted = " + ".join(dict.fromkeys(call["name"] for call in calls))
        if predicted == label and expected and not all(_has_arguments(call, expected) for call in calls):
            predicted = WRONG_ARGUMENTS
    return predicted, predicted == label


def score_json_schema(request: dict, reply_text: str | None, label: str) -> tuple[str, bool]:
    """(predicted, correct) of a reply to a structured-output request."""
    valid = structured_output_valid(request, reply_text) is True
    return (label if valid else INVALID_OUTPUT), valid
