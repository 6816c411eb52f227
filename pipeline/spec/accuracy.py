"""The accuracy slice: the buyer's labelled items, how each is prompted and scored."""

from __future__ import annotations

import re
import string
from typing import Literal

from pydantic import Field, field_validator, model_validator

from pipeline.spec.base import Strict

ACCURACY_TEMPLATE_FIELDS = {"text", "labels"}
CALL_SCORERS = ("tool_call", "json_schema")  # scorers of a reply's tool calls or structured answer


class AccuracySlice(Strict):
    """The buyer's labelled slice: each item rendered through `prompt_template` and scored."""

    path: str = Field(description="CSV or JSONL file, relative to the spec")
    format: Literal["csv", "jsonl"] | None = Field(default=None, description="default: from the suffix")
    text_field: str = "text"
    label_field: str = "label"
    id_field: str | None = Field(default=None, description="default: the 1-based line number")
    prompt_template: str = Field(description="user message; {text} is the item, {labels} the label list")
    system_prompt: str | None = None
    scorer: Literal["exact", "normalised", "regex", "choice", "tool_call", "json_schema"] = Field(
        default="choice",
        description="tool_call: the label is the tool the reply must call (the item offers `tools_field`); "
        "json_schema: the reply must validate against the item's `response_format_field` (pipeline/accuracy/calls.py)",
    )
    pattern: str | None = Field(default=None, description="regex scorer: its first group is the answer")
    labels: list[str] | None = Field(default=None, description="choice scorer: default, the slice's labels")
    tools_field: str = Field(default="tools", description="tool_call: each item's OpenAI `tools` list")
    tool_choice_field: str = Field(default="tool_choice", description="tool_call: each item's `tool_choice`, if any")
    arguments_field: str | None = Field(
        default=None, description="tool_call: each item's expected arguments (an object), if any; default none checked"
    )
    response_format_field: str = Field(
        default="response_format", description="json_schema: each item's `response_format` (type json_schema)"
    )
    mode: Literal["separate", "mixed"] = Field(
        default="separate",
        description="separate: replayed on its own, after the load; mixed: each item sent once among the production "
        "requests of the load replay, at a planned offset (pipeline/plan/accuracy.py)",
    )
    placement: Literal["even", "random"] = Field(
        default="even", description="mixed: offsets spread evenly over the plan, or seeded uniform random ones"
    )
    seed: int = Field(default=0, description="mixed, placement random: the seed of the offsets")
    max_items: int | None = Field(default=None, ge=1)
    max_tokens: int = Field(default=16, ge=1)
    concurrency: int = Field(default=8, ge=1)
    request_timeout_s: float = Field(default=30.0, gt=0)

    @field_validator("prompt_template")
    @classmethod
    def _template_fields(cls, value: str) -> str:
        try:
            fields = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        except ValueError as exc:
            raise ValueError(f"not a valid template: {exc}") from None
        if "text" not in fields:
            raise ValueError("the template must contain {text}")
        unknown = sorted(fields - ACCURACY_TEMPLATE_FIELDS)
        if unknown:
            raise ValueError(f"unknown template field(s) {unknown}; known: text, labels")
        return value

    @property
    def scores_calls(self) -> bool:
        """Whether the items carry request fields (tools, a schema) and the reply's calls are scored."""
        return self.scorer in CALL_SCORERS

    @model_validator(mode="after")
    def _call_scorers_separate(self) -> AccuracySlice:
        if self.scores_calls and self.mode == "mixed":
            raise ValueError(
                f"scorer {self.scorer} needs mode separate: the load replay keeps validity flags, not the calls"
            )
        return self

    @model_validator(mode="after")
    def _regex_needs_pattern(self) -> AccuracySlice:
        if self.scorer == "regex":
            if not self.pattern:
                raise ValueError("scorer regex needs pattern")
            try:
                compiled = re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern is not a valid regex: {exc}") from None
            if compiled.groups < 1:
                raise ValueError("pattern needs a capture group: its first group is the answer")
        return self
