"""Serving profiles: the knobs of the reference endpoint's performance model and its faults.

A profile is a YAML file (`pipeline/reference/profiles/NAME.yaml`, or any path). The model it
parameterises is in `pipeline/reference/serving_model.py`; each bundled profile's header comment says
what it imitates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"

# Fault names, as written in a profile's `faults.rates` and in the `x-reference-fault` header.
FaultKind = Literal[
    "5xx",
    "429",
    "reset",
    "stall",
    "cut",
    "malformed",
    "wrong_usage",
    "no_usage",
    "model_not_found",
    "buffered",
    "bad_tool_args",
    "overbill",
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]


class FaultConfig(BaseModel):
    """Faults injected at random (seeded) per request, plus the knobs of some of them."""

    model_config = ConfigDict(extra="forbid")

    rates: dict[FaultKind, float] = Field(default_factory=dict, description="probability per request of each fault")
    retry_after_s: int = Field(default=1, ge=0, description="Retry-After of a 429")
    stall_s: float = Field(default=3600.0, gt=0, description="how long a stalled stream stays silent")
    overbill_fraction: float = Field(
        default=0.1, gt=0, description="an over-billing reply's usage.prompt_tokens: the prompt's count × (1 + this)"
    )

    @model_validator(mode="after")
    def _rates_are_probabilities(self) -> FaultConfig:
        bad = {k: v for k, v in self.rates.items() if not 0 <= v <= 1}
        if bad:
            raise ValueError(f"fault rates must be in [0, 1], got {bad}")
        if sum(self.rates.values()) > 1 + 1e-9:
            raise ValueError(f"fault rates add up to {sum(self.rates.values()):g} > 1")
        return self


class OracleConfig(BaseModel):
    """The accuracy oracle of a profile (`oracle:`); what it does is in `oracle.py`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer_key: str = Field(description="CSV or JSONL labelled slice; relative paths resolve against the YAML file")
    text_field: str = "text"
    label_field: str = "label"
    accuracy: float = Field(default=0.9, ge=0, le=1)
    per_label: dict[str, float] = Field(default_factory=dict)
    seed: int = 0

    def resolved(self, base_dir: Path) -> OracleConfig:
        """The same config with `answer_key` made absolute against `base_dir`."""
        key = Path(self.answer_key)
        return self if key.is_absolute() else self.model_copy(update={"answer_key": str((base_dir / key).resolve())})

    def probability(self, label: str) -> float:
        return self.per_label.get(label, self.accuracy)


def load_oracle_config(path: str | Path) -> OracleConfig:
    """An oracle YAML file (the `oracle:` section on its own), paths resolved against it."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"oracle file not found: {path}")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"oracle file {path} must be a YAML mapping")
    return OracleConfig.model_validate(data).resolved(path.parent)


# how much of `reasoning.tokens` each `reasoning_effort` spends (OpenAI's effort names)
DEFAULT_EFFORT_SCALE = {"none": 0.0, "minimal": 0.25, "low": 0.5, "medium": 1.0, "high": 2.0}


class ReasoningConfig(BaseModel):
    """A reasoning model (`reasoning:`): every chat reply first streams reasoning pieces (one token
    each, in `delta.<field>`), then the answer or a tool call; usage reports them in
    `completion_tokens_details.reasoning_tokens`, and they count in `completion_tokens` and in
    `max_tokens` (OpenAI's accounting)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: int = Field(ge=0, description="reasoning tokens of a reply at `reasoning_effort: medium` (or none given)")
    effort_scale: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_EFFORT_SCALE),
        description="reasoning_effort -> multiple of `tokens`; an effort not listed is refused (400)",
    )
    field: Literal["reasoning_content", "reasoning"] = Field(
        default="reasoning_content",
        description="the delta key (vLLM/DeepSeek: reasoning_content; OpenRouter: reasoning)",
    )

    def tokens_for(self, effort: str | None, enable_thinking: bool | None) -> int:
        """Reasoning tokens for a request's effort; `chat_template_kwargs.enable_thinking: false`
        turns reasoning off (Qwen3's switch)."""
        if enable_thinking is False:
            return 0
        return round(self.tokens * self.effort_scale[effort or "medium"])


class ServingProfile(BaseModel):
    """Timing model of a simulated serving engine with continuous batching (see serving_model.py).

    One engine step runs every decoding sequence for one token plus prefill chunks of waiting
    prompts, within `max_batch_tokens`; its duration is
    `step_overhead_ms + prefill_ms_per_token × prefill tokens + decode_step_ms(decoding seqs)`,
    where `decode_step_ms(n) = decode_ms_per_token × (1 + decode_slowdown_per_seq × (n − 1))`.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    model: str = "reference-model"
    version: str = "2026-11-01"
    prefill_ms_per_token: float = Field(ge=0)
    decode_ms_per_token: float = Field(ge=0)
    decode_slowdown_per_seq: float = Field(ge=0)
    max_running_seqs: int = Field(ge=1)
    max_batch_tokens: int | None = Field(
        default=None, ge=1, description="per-step token budget (decode tokens + prefill chunk); none: unbounded"
    )
    step_overhead_ms: float = Field(default=0.0, ge=0, description="fixed cost of every engine step")
    kv_cache_tokens: int | None = Field(default=None, ge=1, description="KV-cache capacity in tokens; none: unbounded")
    kv_policy: Literal["reserve", "preempt"] = Field(
        default="preempt",
        description="reserve: admit only when prompt + max output fit (queue, never pre-empt); "
        "preempt: admit when the prompt fits, pre-empt the newest sequence when full",
    )
    prefix_cache: bool = Field(
        default=True, description="cache computed prompt blocks (prefix_cache.py): a hit skips that block's prefill"
    )
    kv_block_tokens: int = Field(
        default=16, ge=1, description="tokens per KV block, the prefix cache's unit (vLLM: 16)"
    )
    prefix_cache_blocks: int | None = Field(
        default=None, ge=1, description="blocks the prefix cache keeps (LRU); none: as many as kv_cache_tokens holds"
    )
    default_max_tokens: int = Field(default=128, ge=0)
    constrained_decode_ms_per_token: float = Field(
        default=0.0,
        ge=0,
        description="extra cost per token of each decoding sequence whose output a JSON schema or a tool "
        "call constrains (the grammar mask), added to the step",
    )
    reasoning: ReasoningConfig | None = None
    seed: int = 0
    faults: FaultConfig = Field(default_factory=FaultConfig)
    oracle: OracleConfig | None = None

    @property
    def instant(self) -> bool:
        """True when the model costs nothing and bounds nothing: the zero-delay echo."""
        return (
            self.prefill_ms_per_token == 0
            and self.decode_ms_per_token == 0
            and self.step_overhead_ms == 0
            and self.constrained_decode_ms_per_token == 0
            and self.kv_cache_tokens is None
        )

    @property
    def prefix_cache_capacity_blocks(self) -> int | None:
        """The prefix cache's bound in blocks (None: unbounded, as the KV cache is)."""
        if self.prefix_cache_blocks is not None:
            return self.prefix_cache_blocks
        return None if self.kv_cache_tokens is None else max(self.kv_cache_tokens // self.kv_block_tokens, 1)


def available_profiles() -> list[str]:
    """Names of the profiles shipped with the package."""
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))


def load_profile(name_or_path: str) -> ServingProfile:
    """Load a bundled profile by bare name, or a profile YAML file by path."""
    candidate = Path(name_or_path)
    is_path = candidate.suffix in {".yaml", ".yml"} or len(candidate.parts) > 1
    if is_path:
        if not candidate.is_file():
            raise ValueError(f"profile file not found: {name_or_path}")
        path = candidate
    else:
        path = PROFILES_DIR / f"{name_or_path}.yaml"
        if not path.is_file():
            raise ValueError(f"unknown serving profile {name_or_path!r}; available: {', '.join(available_profiles())}")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"profile {path} must be a YAML mapping")
    try:
        profile = ServingProfile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"profile {path}: {problems}") from None
    if profile.oracle is not None:
        profile = profile.model_copy(update={"oracle": profile.oracle.resolved(path.parent)})
    return profile
