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
        """Each figure by its catalogue name; a name the field gives it (`vllm bench serve`'s
        `p99_ttft_ms`, `output_throughput`, …: the catalogue's `claim_names`) is read as that figure."""
        unknown = sorted(name for name in value if metrics.canonical_name(name) is None)
        if unknown:
            raise ValueError(f"unknown figure(s) {unknown}; known: {', '.join(metrics.known_names())}")
        figures: dict[str, float] = {}
        for name, claimed in value.items():
            canonical = metrics.canonical_name(name)
            assert canonical is not None
            if canonical in figures:
                raise ValueError(f"{name!r} and another name both claim {canonical!r}; give it once")
            figures[canonical] = claimed
        return figures
