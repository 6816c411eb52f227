"""Quality of an agent's replies under load: are its tool calls and structured answers valid?

Computed on every production reply the replay receives (and on labelled items: the slice's
`tool_call` and `json_schema` scorers, `pipeline/accuracy/calls.py`), from the request
as sent and the reply as streamed; only the flags are kept, never the text or the arguments.

- **Tool-call schema accuracy** (K2-Vendor-Verifier's `schema_accuracy`, judged as its
  `tool_calls_eval.py` does): a reply whose finish reason is `tool_calls` is valid when it carries
  at least one call and every call names a tool the request offered and its arguments parse as
  JSON and validate against that tool's `parameters` schema (`jsonschema`, which also checks the
  schema: a schema that is itself invalid fails the call, as there). Replies that finish
  otherwise are not judged (None): whether the model *should* have called is a different figure.
- **Structured-output valid rate**: the reply to a `response_format` `json_schema` request parses
  and validates against that schema; to `json_object`, parses as a JSON object. Other requests are
  not judged (None). A reply cut by `max_tokens` (finish reason `length`) is judged as received:
  the buyer's application would have received it so.

Schemas are checked with `jsonschema` (the validator class the schema's `$schema` names, Draft
2020-12 by default). For structured output a schema that is itself invalid makes the reply
unjudgeable (None): the buyer's schema is at fault, not the candidate.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import exceptions as schema_errors
from jsonschema import validators

from pipeline.replay.recording.records import RequestOutcome

TOOL_CALLS = "tool_calls"


def _valid(instance: Any, schema: dict) -> bool | None:
    """Whether `instance` validates against `schema`; None when the schema itself is invalid."""
    if schema_problem(schema) is not None:
        return None
    return validators.validator_for(schema, default=validators.Draft202012Validator)(schema).is_valid(instance)


def schema_problem(schema: dict) -> str | None:
    """Why `schema` is not a valid JSON schema (under the validator `_valid` uses); None if it is."""
    validator_class = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        validator_class.check_schema(schema)
    except schema_errors.SchemaError as exc:
        return exc.message
    return None


def _parsed(text: str | None) -> tuple[bool, Any]:
    try:
        return True, json.loads(text or "")
    except ValueError:
        return False, None


def _offered_tools(tools: list | None) -> dict[str, dict]:
    offered = {}
    for tool in tools or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            offered[function["name"]] = function.get("parameters") or {"type": "object"}
    return offered


def tool_call_valid(request_fields: dict | None, calls: list[dict], finish_reason: str | None) -> bool | None:
    """The module docstring's rule. `calls`: each streamed call's `name` and `arguments` text."""
    if finish_reason != TOOL_CALLS:
        return None
    offered = _offered_tools((request_fields or {}).get("tools"))
    if not calls:
        return False  # finished for tool calls without sending one
    for call in calls:
        schema = offered.get(call.get("name") or "")
        parsed, arguments = _parsed(call.get("arguments"))
        if schema is None or not parsed or _valid(arguments, schema) is not True:
            return False
    return True


def structured_output_valid(request_fields: dict | None, reply_text: str | None) -> bool | None:
    """The module docstring's rule for the answer text of a `response_format` request."""
    response_format = (request_fields or {}).get("response_format")
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind not in ("json_object", "json_schema"):
        return None
    parsed, value = _parsed(reply_text)
    if not parsed:
        return False
    if kind == "json_object":
        return isinstance(value, dict)
    spec = response_format.get("json_schema") if isinstance(response_format, dict) else None
    schema = spec.get("schema") if isinstance(spec, dict) else None
    return _valid(value, schema) if isinstance(schema, dict) else None


def judge_reply(outcome: RequestOutcome, request_fields: dict | None) -> None:
    """A good reply's two validity flags, from the request as sent and the reply as streamed (the
    calls and the answer text are read here and never recorded)."""
    if outcome.error_type is not None or not request_fields:
        return
    outcome.tool_call_valid = tool_call_valid(request_fields, outcome.tool_call_pieces or [], outcome.finish_reason)
    outcome.structured_output_valid = structured_output_valid(request_fields, outcome.reply_text)
