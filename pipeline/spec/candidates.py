"""The candidates: each OpenAI-compatible endpoint under test and its price."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pipeline.spec.base import Strict


class Price(Strict):
    usd_per_hour: float | None = Field(default=None, ge=0)
    replicas: int = Field(default=1, ge=1)
    usd_per_million_input_tokens: float | None = Field(default=None, ge=0)
    usd_per_million_output_tokens: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_pricing(self) -> Price:
        hourly = self.usd_per_hour is not None
        tokens = self.usd_per_million_input_tokens is not None or self.usd_per_million_output_tokens is not None
        if hourly == tokens:
            raise ValueError(
                "give either usd_per_hour (with replicas) or usd_per_million_input_tokens/"
                "usd_per_million_output_tokens, not both and not neither"
            )
        return self


class Candidate(Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    base_url: str = Field(pattern=r"^https?://", description="OpenAI-compatible base URL, e.g. .../v1")
    model: str
    api: Literal["chat", "completions", "responses"] = Field(
        default="chat",
        description="the OpenAI API the replay speaks: chat (/chat/completions), completions (/completions, legacy: "
        "the messages as one plain prompt) or responses (/responses, typed events); docs/agents.md, 'The API kind'",
    )
    api_key_env: str | None = Field(default=None, description="name of the environment variable holding the API key")
    tokenizer: str | None = Field(
        default=None,
        description="the tokenizer of the model this candidate serves, as a workload.prompts.tokenizer setting "
        "(loadproof-approx is the reference endpoint's own); the bill check (billed vs counted tokens) is a verdict "
        "only when the plan counted under this very setting; docs/agents.md, 'The bill checked'",
    )
    price: Price
    max_context_tokens: int | None = Field(
        default=None, ge=1, description="the model's context window: prompt + max_tokens must fit"
    )
    gpu_metrics_url: str | None = Field(
        default=None,
        pattern=r"^https?://",
        description="the Prometheus endpoint of the candidate's GPU telemetry (NVIDIA DCGM exporter, e.g. "
        "http://host:9400/metrics), scraped beside the load like /metrics: the pack adds GPU utilisation and "
        "energy per output token",
    )
