"""The re-validation spec: one YAML file, validated by pydantic, errors that name file, line, field."""

from __future__ import annotations

import hashlib
import re
import string
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pipeline import figures
from pipeline.spec_base import _Strict
from pipeline.spec_workload import (  # re-exported: `from pipeline.spec import Replay` keeps working
    LOG_FORMATS,
    ColumnMapping,
    LogSource,
    ProductionConditions,
    ProfileSettings,
    Prompts,
    ProxyTolerance,
    Replay,
    Representativeness,
    Sample,
    Workload,
)

__all__ = [
    "LOG_FORMATS", "AccuracySlice", "Candidate", "ColumnMapping", "LoadedSpec", "LogSource", "ProductionConditions",
    "ProfileSettings", "Prompts", "ProxyTolerance", "Replay", "Representativeness", "Sample", "Spec", "SpecError",
    "Workload", "load_spec",
]


class SpecError(ValueError):
    """A spec that cannot be used; the message names the file, the line and the field."""


class ClaimConditions(_Strict):
    hardware: str | None = None
    precision: str | None = None
    concurrency: int | None = Field(default=None, ge=1, description="batch size or concurrency")
    input_tokens: int | None = Field(default=None, ge=1)
    output_tokens: int | None = Field(default=None, ge=1)
    dataset: str | None = None


class Claim(_Strict):
    source: str = Field(description="where the published figures come from")
    figures: dict[str, float] = Field(min_length=1)
    conditions: ClaimConditions = ClaimConditions()

    @field_validator("figures")
    @classmethod
    def _known_figures(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(figures.known_names()))
        if unknown:
            raise ValueError(
                f"unknown figure(s) {unknown}; known: {', '.join(figures.known_names())}"
            )
        return value


class Price(_Strict):
    usd_per_hour: float | None = Field(default=None, ge=0)
    replicas: int = Field(default=1, ge=1)
    usd_per_million_input_tokens: float | None = Field(default=None, ge=0)
    usd_per_million_output_tokens: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_pricing(self) -> Price:
        hourly = self.usd_per_hour is not None
        tokens = (
            self.usd_per_million_input_tokens is not None
            or self.usd_per_million_output_tokens is not None
        )
        if hourly == tokens:
            raise ValueError(
                "give either usd_per_hour (with replicas) or usd_per_million_input_tokens/"
                "usd_per_million_output_tokens, not both and not neither"
            )
        return self


class Candidate(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    base_url: str = Field(pattern=r"^https?://", description="OpenAI-compatible base URL, e.g. .../v1")
    model: str
    api_key_env: str | None = Field(
        default=None, description="name of the environment variable holding the API key"
    )
    price: Price
    max_context_tokens: int | None = Field(
        default=None, ge=1, description="the model's context window: prompt + max_tokens must fit"
    )


class Sla(_Strict):
    """Per-request bounds; a request meets the SLA when it succeeded and is within every bound."""

    ttft_ms: float | None = Field(default=None, gt=0)
    tpot_ms: float | None = Field(default=None, gt=0)
    e2e_ms: float | None = Field(default=None, gt=0)
    min_attainment: float = Field(
        default=0.95, gt=0, le=1,
        description="share of requests that must meet every bound for a run (or load level) to meet the SLA",
    )
    max_error_rate: float = Field(default=0.05, ge=0, le=1, description="error budget of the replay")


ACCURACY_TEMPLATE_FIELDS = {"text", "labels"}


class AccuracySlice(_Strict):
    """The buyer's labelled slice: each item rendered through `prompt_template` and scored."""

    path: str = Field(description="CSV or JSONL file, relative to the spec")
    format: Literal["csv", "jsonl"] | None = Field(default=None, description="default: from the suffix")
    text_field: str = "text"
    label_field: str = "label"
    id_field: str | None = Field(default=None, description="default: the 1-based line number")
    prompt_template: str = Field(description="user message; {text} is the item, {labels} the label list")
    system_prompt: str | None = None
    scorer: Literal["exact", "normalised", "regex", "choice"] = "choice"
    pattern: str | None = Field(default=None, description="regex scorer: its first group is the answer")
    labels: list[str] | None = Field(default=None, description="choice scorer: default, the slice's labels")
    mode: Literal["separate", "mixed"] = Field(
        default="separate",
        description="separate: replayed on its own, after the load; mixed: each item sent once among the production "
        "requests of the load replay, at a planned offset (pipeline/accuracy_mixed.py)",
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


class Analysis(_Strict):
    """How raw timings become tables: confidence, prompt-length buckets, the ITL bound."""

    confidence: float = Field(default=0.95, gt=0.5, lt=1, description="two-sided, for every interval")
    prompt_token_buckets: list[int] = Field(
        default=[256, 1024, 4096], description="ascending upper edges (exclusive) of prompt-length buckets"
    )
    itl_max_values: int = Field(
        default=10_000_000, ge=1000,
        description="no longer used: ITL counts every gap, exact to 1 µs, from itl_histogram; accepted so older specs load",
    )

    @field_validator("prompt_token_buckets")
    @classmethod
    def _ascending(cls, value: list[int]) -> list[int]:
        if any(edge < 1 for edge in value) or any(b <= a for a, b in zip(value, value[1:])):
            raise ValueError("edges must be positive and strictly ascending")
        return value


class Spec(_Strict):
    name: str
    claim: Claim
    candidates: list[Candidate] = Field(min_length=1)
    workload: Workload
    sla: Sla = Sla()
    accuracy: AccuracySlice | None = None
    analysis: Analysis = Analysis()

    @field_validator("candidates")
    @classmethod
    def _unique_names(cls, value: list[Candidate]) -> list[Candidate]:
        names = [c.name for c in value]
        if len(set(names)) != len(names):
            raise ValueError(f"candidate names must be unique, got {names}")
        return value


class LoadedSpec(BaseModel):
    """A validated spec together with where it came from (for relative paths and lineage)."""

    model_config = ConfigDict(frozen=True)

    spec: Spec
    path: Path
    sha256: str

    def resolve(self, relative: str) -> Path:
        """A path written in the spec, relative to the spec file's folder."""
        candidate = Path(relative)
        return candidate if candidate.is_absolute() else (self.path.parent / candidate).resolve()


def load_spec(path: str | Path) -> LoadedSpec:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SpecError(f"{path}: cannot read spec: {exc.strerror}") from exc
    try:
        root = yaml.compose(raw.decode("utf-8"), Loader=yaml.SafeLoader)
        data = yaml.safe_load(raw)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise SpecError(f"{path}: the spec must be a YAML mapping at the top level")
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_describe_errors(path, root, exc)) from None
    return LoadedSpec(spec=spec, path=path.resolve(), sha256=hashlib.sha256(raw).hexdigest())


def _describe_errors(path: Path, root: yaml.Node | None, exc: ValidationError) -> str:
    lines = [f"{path}: invalid spec ({exc.error_count()} problem(s))"]
    for error in exc.errors():
        loc = [part for part in error["loc"] if not str(part).startswith("function-after")]
        field = ".".join(str(part) for part in loc) or "(top level)"
        line = _line_of(root, loc)
        where = f"{path}:{line}" if line else str(path)
        lines.append(f"  {where}: {field}: {error['msg']}")
    return "\n".join(lines)


def _line_of(node: yaml.Node | None, loc: list) -> int | None:
    """1-based line of the deepest YAML node that the error location reaches."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == str(part)), None)
            if match is None:
                key = next((k for k, _ in node.value if k.value == str(part)), None)
                return key.start_mark.line + 1 if key is not None else line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line
