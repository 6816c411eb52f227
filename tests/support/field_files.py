"""Real files from the field (tests/fixtures/field/README.md), read as the tools that made them
send them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

FIELD = Path(__file__).resolve().parents[1] / "fixtures" / "field"

# BFCL's GORILLA_TO_OPENAPI (bfcl_eval/constants/type_mappings.py), for the types its files use
_OPENAPI_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": "string", "list": "array"}


def _openapi(schema: dict) -> dict:
    schema = dict(schema)
    if "type" in schema:
        schema["type"] = _OPENAPI_TYPES.get(schema["type"], schema["type"])
    if "properties" in schema:
        schema["properties"] = {name: _openapi(sub) for name, sub in schema["properties"].items()}
    if "items" in schema:
        schema["items"] = _openapi(schema["items"])
    return schema


def bfcl_tools(name: str = "bfcl_travel_booking.jsonl") -> list[dict]:
    """A BFCL tool suite as OpenAI `tools`, converted as BFCL's `convert_to_tool` does."""
    tools = []
    for line in (FIELD / name).read_text(encoding="utf-8").splitlines():
        function = copy.deepcopy(json.loads(line))
        function.pop("response", None)
        function["parameters"] = {**_openapi(function["parameters"]), "type": "object"}
        tools.append({"type": "function", "function": function})
    return tools
