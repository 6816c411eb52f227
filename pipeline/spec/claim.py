"""The vendor's claim: the published figures and the conditions they were measured under."""

from __future__ import annotations

from pydantic import Field, field_validator

from pipeline.analysis import metrics
from pipeline.spec.base import Strict


class ClaimConditions(Strict):
    hardware: str | None = None
    precision: str | None = None
    concurrency: int | None = Field(default=None, ge=1, description="batch size or concurrency")
    input_tokens: int | None = Field(default=None, ge=1)
    output_tokens: int | None = Field(default=None, ge=1)
    dataset: str | None = None


class Claim(Strict):
    source: str = Field(description="where the published figures come from")
    figures: dict[str, float] = Field(min_length=1)
    conditions: ClaimConditions = ClaimConditions()

    @field_validator("figures")
    @classmethod
    def _known_figures(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(metrics.known_names()))
        if unknown:
            raise ValueError(f"unknown figure(s) {unknown}; known: {', '.join(metrics.known_names())}")
        return value
