"""The re-validation spec: one YAML file, validated by pydantic, errors that name file, line, field."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pipeline.spec.accuracy import AccuracySlice
from pipeline.spec.base import Strict
from pipeline.spec.candidates import Candidate
from pipeline.spec.claim import Claim
from pipeline.spec.privacy import Privacy
from pipeline.spec.workload import Workload


class SpecError(ValueError):
    """A spec that cannot be used; the message names the file, the line and the field."""


class PerUserTier(Strict):
    """An SLO tier per user (Artificial Analysis' AA-AgentPerf reports capacity so): a stream
    meets it when it succeeded, its TTFT is at most `ttft_ms_max` and its output speed — output
    tokens / (E2E − TTFT) — is at least `output_tokens_per_s_min`; a load level meets the tier when
    at least `min_share` of its steady-window streams do. Users at the tier: the most concurrent
    streams of the capacity search that still meet it (pipeline/analysis/sizing/users_at_tier.py)."""

    output_tokens_per_s_min: float = Field(
        gt=0, description="the output-speed floor of one stream, tokens/s after its first token (e.g. 30, 100, 300)"
    )
    ttft_ms_max: float = Field(gt=0, description="the TTFT ceiling of one stream, ms (e.g. 15000)")
    min_share: float = Field(
        default=0.95,
        gt=0,
        le=1,
        description="share of a level's steady-window streams that must meet the tier for the level to meet it",
    )


class Sla(Strict):
    """Per-request bounds; a request meets the SLA when it succeeded and is within every bound."""

    ttft_ms: float | None = Field(default=None, gt=0)
    tpot_ms: float | None = Field(default=None, gt=0)
    e2e_ms: float | None = Field(default=None, gt=0)
    min_attainment: float = Field(
        default=0.95,
        gt=0,
        le=1,
        description="share of requests that must meet every bound for a run (or load level) to meet the SLA",
    )
    max_error_rate: float = Field(default=0.05, ge=0, le=1, description="error budget of the replay")
    per_user: PerUserTier | None = Field(
        default=None, description="an SLO tier per stream: the capacity search then reports the users at it"
    )


class Analysis(Strict):
    """How raw timings become tables: confidence, prompt-length buckets, the ITL bound."""

    confidence: float = Field(default=0.95, gt=0.5, lt=1, description="two-sided, for every interval")
    prompt_token_buckets: list[int] = Field(
        default=[256, 1024, 4096], description="ascending upper edges (exclusive) of prompt-length buckets"
    )
    intervals: Literal["dependence_aware", "independent"] = Field(
        default="dependence_aware",
        description=(
            "dependence_aware: each interval the wider of the independent one (exact order statistic, Wilson) "
            "and batch means over send-time batches (pipeline/analysis/statistics/dependence.py); independent: the "
            "former only, as packs written before it (rates have no independent method: batch means either way)"
        ),
    )
    interval_batches: int = Field(
        default=5, ge=2, le=100, description="equal spans of send time the steady window is cut into for batch means"
    )
    itl_max_values: int = Field(
        default=10_000_000,
        ge=1000,
        description=(
            "no longer used: ITL counts every gap, exact to 1 µs, from itl_histogram; accepted so older specs load"
        ),
    )

    @field_validator("prompt_token_buckets")
    @classmethod
    def _ascending(cls, value: list[int]) -> list[int]:
        if any(edge < 1 for edge in value) or any(b <= a for a, b in zip(value, value[1:])):
            raise ValueError("edges must be positive and strictly ascending")
        return value


class Spec(Strict):
    name: str
    claim: Claim
    candidates: list[Candidate] = Field(min_length=1)
    workload: Workload
    sla: Sla = Sla()
    accuracy: AccuracySlice | None = None
    analysis: Analysis = Analysis()
    privacy: Privacy = Privacy()

    @field_validator("candidates")
    @classmethod
    def _unique_names(cls, value: list[Candidate]) -> list[Candidate]:
        names = [c.name for c in value]
        if len(set(names)) != len(names):
            raise ValueError(f"candidate names must be unique, got {names}")
        return value

    @model_validator(mode="after")
    def _repeats_replay_production_load_only(self) -> Spec:
        # mixed accuracy rides in the production replay: N repeats would score each item N times
        if self.workload.replay.repeats > 1 and self.accuracy is not None and self.accuracy.mode == "mixed":
            raise ValueError(
                "workload.replay.repeats > 1 needs accuracy.mode separate (mixed items would be scored N times)"
            )
        if self.workload.replay.until is not None and self.accuracy is not None and self.accuracy.mode == "mixed":
            raise ValueError(
                "workload.replay.until needs accuracy.mode separate (mixed items would be scored once per run)"
            )
        return self


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
        spec = Spec.model_validate(data, context={"spec_dir": path.resolve().parent})
    except ValidationError as exc:
        raise SpecError(_describe_errors(path, root, exc)) from None
    for note in spec.claim.notes:  # a result file and hand-written values: which won
        logging.getLogger(__name__).warning("%s: claim: %s", path, note)
    if spec.sla.per_user is not None and spec.workload.replay.sweep is None:
        logging.getLogger(__name__).warning(
            "%s: sla.per_user: no load sweep runs, so no users at the tier are reported (they are read from the "
            "sweep's levels): add workload.replay.sweep (e.g. `sweep: {search: {}}`) or remove sla.per_user",
            path,
        )
    if spec.claim.unmapped:
        logging.getLogger(__name__).info("%s: claim.from: fields not read: %s", path, ", ".join(spec.claim.unmapped))
    return LoadedSpec(spec=spec, path=path.resolve(), sha256=hashlib.sha256(raw).hexdigest())


def field_line(path: str | Path, loc: tuple[str | int, ...]) -> int | None:
    """1-based line of a field in the spec file (the deepest part of `loc` it holds; None where
    the file cannot be read): for problems found after the spec loaded (the preflight's)."""
    try:
        root = yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return _line_of(root, list(loc))


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
