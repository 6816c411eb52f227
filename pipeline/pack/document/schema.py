"""`schemas/evidence_pack.schema.json`, generated from the pack's models (`pack/document/__init__.py`) so
that it cannot drift from the code that writes the pack.

    python -m pipeline.pack.document.schema          # rewrite the committed file
    python -m pipeline.pack.document.schema --check  # exit 1 when it differs (tests/unit/test_pack_schema.py)

The models forbid unknown keys (a typo fails when the pack is written); the published schema
leaves every object open instead, as its description promises: keys may be added to the pack,
none renamed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema

from pipeline import REPO_ROOT
from pipeline.pack.document import EvidencePack

SCHEMA_PATH = REPO_ROOT / "schemas" / "evidence_pack.schema.json"
HEADER = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://loadproof.invalid/schemas/evidence_pack.schema.json",
    "title": "loadproof evidence pack",
}


class _Untitled(GenerateJsonSchema):
    """No generated titles on properties ("Run Id" for run_id says nothing the key does not)."""

    def field_title_should_be_set(self, schema) -> bool:
        return False


def evidence_pack_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of evidence_pack.json: the document first, its parts after."""
    generated = _published(
        EvidencePack.model_json_schema(
            mode="serialization", schema_generator=_Untitled, union_format="primitive_type_array"
        )
    )
    definitions = generated.pop("$defs")
    generated.pop("title", None)
    return {**HEADER, **generated, "$defs": definitions}


def schema_text() -> str:
    return json.dumps(evidence_pack_schema(), indent=2, ensure_ascii=False) + "\n"


def _published(node: Any) -> Any:
    """Drop `additionalProperties: false/true` everywhere: the schema never closes an object (a
    dict's value schema, `additionalProperties: {...}`, stays); descriptions on one line."""
    if isinstance(node, dict):
        return {
            key: " ".join(value.split()) if key == "description" and isinstance(value, str) else _published(value)
            for key, value in node.items()
            if not (key == "additionalProperties" and isinstance(value, bool))
        }
    if isinstance(node, list):
        return [_published(value) for value in node]
    return node


def main(argv: list[str], path: Path = SCHEMA_PATH) -> int:
    text = schema_text()
    if "--check" in argv:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return 0
        print(f"{path} differs from the pack's models: run `python -m pipeline.pack.document.schema`", file=sys.stderr)
        return 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
