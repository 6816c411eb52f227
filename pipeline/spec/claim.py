"""The vendor's claim: the published figures and the conditions they were measured under.

Written by hand (`figures`, `conditions`), or read from the vendor's own result file
(`from: FILE, format: vllm_bench | guidellm | aiperf`, pipeline/spec/claim_files.py; FILE relative
to the spec's folder). Both at once: the file's figures and conditions, with every hand-written
figure and condition replacing the file's (hand-written wins; `notes` says which it replaced). The
file's fields that are neither a figure nor a condition are listed in `unmapped`, never guessed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from pipeline.analysis.declare import metrics
from pipeline.spec.base import Strict
from pipeline.spec.claim_files import FORMATS, ClaimFileError, read_claim_file


class ClaimConditions(Strict):
    hardware: str | None = None
    precision: str | None = None
    concurrency: int | None = Field(
        default=None, ge=1, description="batch size or concurrency: the vendor's benchmark as a closed loop"
    )
    input_tokens: int | None = Field(default=None, ge=1, description="prompt length (a result file's mean)")
    output_tokens: int | None = Field(default=None, ge=1, description="output length (a result file's mean)")
    dataset: str | None = None
    request_rate: float | None = Field(
        default=None, gt=0, description="requests/s: the vendor's benchmark as an open loop (without `concurrency`)"
    )
    arrival_process: Literal["constant", "poisson", "gamma"] | None = Field(
        default=None, description="the open loop's arrivals at `request_rate` (poisson when not said)"
    )
    burstiness: float | None = Field(default=None, gt=0, description="gamma arrivals' shape (vllm bench's burstiness)")
    num_requests: int | None = Field(default=None, ge=2, description="how many requests the vendor's benchmark sent")
    endpoint: Literal["chat", "completions"] | None = Field(default=None, description="the API the benchmark called")


_DEFAULTS = {default.key: default for default in metrics.TOLERANCES.values()}


def _tolerance(key: str):
    default = _DEFAULTS[key]
    return Field(default=default.fraction, ge=0, lt=1, description=f"default {default.fraction:g}: {default.source}")


class Tolerance(Strict):
    """How far a measured figure may fall short of its claim and still hold within tolerance, a
    fraction of the claim per figure kind (the metric catalogue's `TOLERANCES` hold the defaults
    and their sources): a higher-is-better figure down to C·(1 − t), a lower-is-better one up to
    C·(1 + t)."""

    throughput: float = _tolerance("throughput")
    latency: float = _tolerance("latency")
    accuracy: float = _tolerance("accuracy")
    cost: float = _tolerance("cost")
    proportion: float = _tolerance("proportion")
    per_request: float = _tolerance("per_request")
    sizing: float = _tolerance("sizing")

    def of(self, metric: str) -> tuple[float, str]:
        """(tolerance, its source) of a claim on `metric`: the spec's own value, or the default
        and why it is the default."""
        default = metrics.tolerance_default(metric)
        setting = metrics.tolerance_setting(metric)
        if default.key in self.model_fields_set:
            return getattr(self, default.key), f"{setting}, set in the spec"
        return default.fraction, f"{setting}, default: {default.source}"


class Claim(Strict):
    source: str = Field(description="where the published figures come from")
    figures: dict[str, float] = Field(min_length=1)
    conditions: ClaimConditions = ClaimConditions()
    # null: verdicts without a tolerance, as packs written before tolerances were judged (`loadproof verify`)
    tolerance: Tolerance | None = Tolerance()
    from_: str | None = Field(default=None, alias="from", description="the vendor's result file, as the claim")
    format: Literal["vllm_bench", "guidellm", "aiperf"] | None = None
    record: int | None = Field(default=None, ge=0, description="which result of a file holding several (0-based)")
    unmapped: list[str] = Field(default=[], description="the result file's fields read as neither figure nor condition")
    notes: list[str] = Field(default=[], description="what the spec load decided: hand-written values that won")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, data: Any, info: ValidationInfo) -> Any:
        """`from` + `format`: the file's figures and conditions under the hand-written ones."""
        if not isinstance(data, dict) or (data.get("from") is None and data.get("format") is None):
            return data
        if data.get("from") is None:
            raise ValueError("claim.format without claim.from; hint: from: the vendor's result file")
        if data.get("format") not in FORMATS:
            raise ValueError(f"claim.format: {data.get('format')!r}; hint: one of {', '.join(FORMATS)} with claim.from")
        base = (info.context or {}).get("spec_dir")
        path = Path(str(data["from"]))
        path = path if path.is_absolute() or base is None else Path(base) / path
        try:
            read = read_claim_file(path, str(data["format"]), data.get("record"))
        except ClaimFileError as exc:
            raise ValueError(f"claim.from: {exc}") from None
        hand_figures = dict(data.get("figures") or {})
        hand_canonical = {metrics.canonical_name(name) for name in hand_figures}
        notes, figures = [], dict(hand_figures)
        for name, value in read.figures.items():
            canonical = metrics.canonical_name(name)
            if canonical in hand_canonical:
                notes.append(f"figure {canonical}: hand-written value wins over the file's {value:g}")
            elif canonical not in {metrics.canonical_name(n) for n in figures}:
                figures[name] = value
        hand_conditions = dict(data.get("conditions") or {})
        for name, value in read.conditions.items():
            if name in hand_conditions and hand_conditions[name] != value:
                notes.append(f"condition {name}: hand-written {hand_conditions[name]!r} wins over the file's {value!r}")
        conditions = {**read.conditions, **hand_conditions}
        return {
            **data,
            "source": data.get("source") or f"{data['format']} result file {data['from']}",
            "figures": figures,
            "conditions": conditions,
            "unmapped": read.unmapped,
            "notes": [*notes, *data.get("notes", [])],
        }

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
