"""The spec's `workload` section: the log, the sample, the profile, the prompts and the replay."""

from __future__ import annotations

import zoneinfo
from typing import Any, Literal

from pydantic import AwareDatetime, Field, ValidationInfo, field_validator, model_validator

from pipeline.contracts.request_fields import LOGGED_CAPS, REQUEST_FIELDS
from pipeline.spec.arms import Arms
from pipeline.spec.base import Strict
from pipeline.spec.sweep import Sweep, check_sweep_mode
from pipeline.spec.until import Until

LogFormatName = Literal[
    "openai_jsonl",
    "azure_csv",
    "mooncake_jsonl",
    "loadproof_trace_jsonl",
    "burstgpt_csv",
    "csv",
    "parquet",
    "otel_genai",
    "litellm_spend_logs",
    "langfuse",
    "bedrock_invocations",
]
# formats whose source may be a PostgreSQL table (dsn_env) instead of files
DATABASE_FORMATS = ("litellm_spend_logs",)


class ColumnMapping(Strict):
    """Which source column holds each canonical field (csv/parquet; overrides a format's default)."""

    arrival: str = Field(description="arrival time column")
    arrival_unit: Literal["timestamp", "s", "ms", "us"] = Field(
        default="timestamp", description="timestamp text/value, or a number of s/ms/us since `origin`"
    )
    prompt_tokens: str
    output_tokens: str
    request_id: str | None = None
    tenant: str | None = None
    route: str | None = None
    latency_ms: str | None = None
    messages_json: str | None = Field(default=None, description="column holding the chat messages as JSON")
    session_id: str | None = Field(
        default=None, description="column holding a session or conversation id (its turns are replayed in order)"
    )
    completed_at: str | None = Field(
        default=None, description="column holding when the reply ended (latency = completed_at − arrival)"
    )
    first_token_at: str | None = Field(
        default=None, description="column holding when the first token came (TTFT = first_token_at − arrival)"
    )


class LogSource(Strict):
    path: str | None = Field(
        default=None, description="a file or a glob of many files; .gz is read transparently (or dsn_env)"
    )
    dsn_env: str | None = Field(
        default=None,
        description="litellm_spend_logs: the environment variable holding the proxy database's PostgreSQL DSN "
        "(the DSN itself never goes in the spec, a log or the pack)",
    )
    format: LogFormatName = "openai_jsonl"
    columns: ColumnMapping | None = Field(default=None, description="needed for csv and parquet")
    timezone: str = Field(default="UTC", description="time zone of timestamps written without one")
    origin: AwareDatetime | None = Field(
        default=None, description="arrival time of offset 0 for relative traces (mooncake, burstgpt, s/ms/us)"
    )

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        """Checked here, so a typo is an error naming the spec's line (not DuckDB's at ingest)."""
        try:
            zoneinfo.ZoneInfo(value)
        except (ValueError, zoneinfo.ZoneInfoNotFoundError):
            raise ValueError(f"unknown time zone {value!r} (an IANA name such as UTC or Europe/Berlin)") from None
        return value

    @model_validator(mode="after")
    def _mapping_for_generic(self) -> LogSource:
        if self.format in ("csv", "parquet") and self.columns is None:
            raise ValueError(f"format {self.format} needs columns (arrival, prompt_tokens, output_tokens, ...)")
        if (self.path is None) == (self.dsn_env is None):
            raise ValueError("the log needs exactly one of path (files) and dsn_env (a database)")
        if self.dsn_env is not None and self.format not in DATABASE_FORMATS:
            raise ValueError(f"dsn_env is for {', '.join(DATABASE_FORMATS)}; format {self.format} reads files")
        return self


class Representativeness(Strict):
    """Two-sample KS on prompt/output lengths and χ² on tenant/route, sample against the log."""

    alpha: float = Field(default=0.01, gt=0, lt=1, description="level of the family of tests (Bonferroni-corrected)")
    on_fail: Literal["warn", "block"] = "warn"


class Sample(Strict):
    mode: Literal["busiest_window", "explicit_window", "peak_hour", "stratified"] = "busiest_window"
    window_s: float = Field(default=60.0, gt=0)
    start_offset_s: float | None = Field(
        default=None, ge=0, description="explicit_window: seconds after the log's first request"
    )
    start_at: AwareDatetime | None = Field(default=None, description="explicit_window: absolute start (with end_at)")
    end_at: AwareDatetime | None = Field(default=None, description="explicit_window: absolute end, exclusive")
    hour: AwareDatetime | None = Field(
        default=None, description="peak_hour: the named hour's start; omitted = the busiest clock hour"
    )
    max_requests: int = Field(default=500, ge=1)
    strata: list[Literal["prompt_length", "output_length", "tenant", "route"]] = Field(
        default=["prompt_length", "tenant"], min_length=1, description="stratified: the stratification keys"
    )
    length_bins: list[int] = Field(
        default=[128, 512, 2048, 8192], min_length=1, description="stratified: token-length bin edges"
    )
    min_per_stratum: int = Field(default=1, ge=0, description="stratified: coverage floor per non-empty stratum")
    seed: int = Field(default=0, description="stratified: seed of the reproducible draw")
    representativeness: Representativeness = Representativeness()

    @model_validator(mode="after")
    def _explicit_needs_start(self) -> Sample:
        if self.mode == "explicit_window":
            absolute = self.start_at is not None and self.end_at is not None
            if self.start_offset_s is None and not absolute:
                raise ValueError("mode explicit_window needs start_offset_s, or start_at and end_at")
            if self.start_at is not None and self.end_at is not None and self.end_at <= self.start_at:
                raise ValueError("end_at must be after start_at")
        if sorted(set(self.length_bins)) != self.length_bins or self.length_bins[0] < 1:
            raise ValueError("length_bins must be increasing positive token counts")
        return self


class ProfileSettings(Strict):
    long_context_tokens: int = Field(default=8192, ge=1, description="a prompt this long or longer is long-context")
    rate_bin_s: float = Field(default=10.0, gt=0, description="bin width of the arrival-rate timeline")
    dispersion_bins_s: list[float] = Field(
        default=[1.0, 10.0, 60.0], min_length=1, description="bin widths of the index of dispersion"
    )


class ProductionConditions(Strict):
    """What production will run, where the logs cannot say (compared with the claim's conditions)."""

    precision: str | None = None
    hardware: str | None = None


class ProxyTolerance(Strict):
    """How far the claim's conditions may sit from production before the figure must be re-measured."""

    length_ratio: float = Field(default=1.5, gt=1, description="claimed vs production p50 length, either way")
    tail_ratio: float = Field(default=4.0, gt=1, description="production p99 length over the claimed length")
    concurrency_ratio: float = Field(default=2.0, gt=1, description="claimed vs production concurrency, either way")
    capacity_ratio: float = Field(
        default=1.25,
        gt=1,
        description="measured proxy verdict: the capacity at the SLA may be at most this factor below a claimed "
        "capacity figure (point estimate) for the claim to stay a good-enough proxy",
    )


class Prompts(Strict):
    """Synthetic prompts for logs that carry lengths but no text (azure, mooncake, burstgpt)."""

    tokenizer: str = Field(
        default="loadproof-approx",
        pattern=r"^(loadproof-approx|hf:.+|gguf:.+|server(:[A-Za-z0-9_.-]+)?)$",
        description="what prompts are fitted and replies without usage counted under: loadproof-approx (words and "
        "punctuation marks, the reference endpoint's count), hf:PATH (a local tokenizer.json or its folder), "
        "gguf:PATH (a GGUF's vocabulary; the `model` extra), server or server:CANDIDATE (the candidate's own "
        "tokenize endpoint; default the first candidate); a relative PATH is against the spec's folder",
    )
    template_tokens: int | None = Field(
        default=None,
        description="a real tokenizer's chat-template overhead around one user message (BOS, turn markers), "
        "added to the fitted content's count; default: measured once, by one non-streamed request to the "
        "tokenizer's server (server) or the first candidate (hf, gguf), as usage.prompt_tokens minus the text's count",
    )
    prefix_block_tokens: int = Field(default=512, ge=1, description="tokens per hash_ids block (Mooncake: 512)")
    min_tokens: bool = Field(
        default=False,
        description="also send the logged output length as min_tokens with ignore_eos (vLLM, the reference "
        "endpoint); off by default because OpenAI's own API refuses unknown parameters",
    )


class SetField(Strict):
    """Send this value instead of the logged one (in every request, logged or not)."""

    set: Any = Field(description="the JSON value sent, e.g. 0 for temperature")


RequestFieldRule = Literal["keep", "drop"] | SetField


MAX_REPEATS = 20  # each repeat is a whole replay: beyond a handful, a longer window is the cheaper precision
MAX_SHARDS = 64  # client processes of one replay (pipeline/replay/production/auto_shards.py)


class Replay(Strict):
    """How the plan is sent: at the logged times (trace), at a synthetic arrival process (rate),
    or closed-loop at a fixed concurrency."""

    mode: Literal["trace", "rate", "concurrency"] = "trace"
    time_scale: float = Field(
        default=1.0, gt=0, description="trace: offsets and session think times × time_scale (0.5 = twice as fast)"
    )
    arrival: Literal["constant", "poisson", "gamma"] = Field(default="poisson", description="rate: the process")
    rate_per_s: float | None = Field(default=None, gt=0, description="rate: mean requests per second")
    burstiness: float = Field(default=1.0, gt=0, description="gamma shape: 1 = Poisson, < 1 burstier")
    ramp_up_s: float = Field(
        default=0.0, ge=0, description="rate: linear ramp to rate_per_s; concurrency: staggered workers"
    )
    seed: int = Field(default=0, description="seed of the synthetic arrival process")
    request: dict[str, RequestFieldRule] = Field(
        default_factory=dict,
        description="per logged request field (tools, tool_choice, response_format, temperature, top_p, seed, stop, "
        "reasoning_effort, ...): keep (the default: sent as logged), drop, or {set: VALUE}; applied when the plan "
        "is built",
    )
    concurrency: int | None = Field(default=None, ge=1, description="closed loop: fixed in-flight")
    max_concurrency: int | None = Field(
        default=None, ge=1, description="cap on in-flight requests in any open-loop mode"
    )
    warmup_s: float = Field(default=0.0, ge=0)
    cooldown_s: float = Field(default=0.0, ge=0)
    request_timeout_s: float = Field(default=60.0, gt=0)
    max_duration_s: float = Field(default=600.0, gt=0, description="hard bound on the replay")
    retries: int = Field(default=0, ge=0, le=10, description="retries of 429/5xx/connection failures; off by default")
    retry_backoff_s: float = Field(
        default=0.5, ge=0, description="first retry delay, doubled each attempt (429 Retry-After wins)"
    )
    transport: Literal["aiohttp", "httpx"] = Field(default="aiohttp", description="HTTP client of the replay")
    shards: int | Literal["auto"] = Field(
        default=1,
        description=(
            "worker processes the plan is split across (on `executor`), one common start time; auto: one per 128 "
            "streams in flight at the peak (what one event loop stamps within 1–5 ms of the wire)"
        ),
    )

    @field_validator("shards", mode="before")
    @classmethod
    def _shards(cls, value: Any) -> Any:
        """A number of processes from 1 to MAX_SHARDS, or auto: one problem, in those words."""
        if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_SHARDS):
            return value
        raise ValueError(f"a number of client processes from 1 to {MAX_SHARDS}, or auto (got {value!r})")

    shard_ready_timeout_s: float = Field(
        default=120.0, gt=0, description="how long a shard waits for the others to be ready"
    )
    executor: Literal["multiprocess", "dask"] = Field(
        default="multiprocess",
        description=(
            "where the shards (the partition's steps) run: Dagster's multiprocess executor on this host (file "
            "barrier), or a Dask cluster (dagster-dask; barrier and clock offsets through the scheduler)"
        ),
    )
    dask_scheduler: str | None = Field(
        default=None,
        description="dask: the scheduler address (tcp://host:8786); none: a local cluster of `shards` worker processes",
    )
    server_metrics_interval_s: float | None = Field(
        default=1.0,
        gt=0,
        description="scrape the candidate's Prometheus /metrics this often during the replay (optional: a warning "
        "when it has none); null: never",
    )
    warm_prefixes: bool = Field(
        default=False,
        description="first send, outside the measured window (before the replay's start, not in raw_timings), the "
        "log's earlier requests whose prefix blocks the window reuses, so the candidate's prefix cache is as warm as "
        "production's when the window began (pipeline/plan/warm_prefixes.py); one reply token each",
    )
    warm_prefixes_max_requests: int = Field(
        default=256, ge=1, le=10_000, description="warm_prefixes: at most this many (the latest before the window)"
    )
    warm_prefixes_lookback_s: float = Field(
        default=3600.0, gt=0, description="warm_prefixes: only requests sent at most this long before the window"
    )
    warm_prefixes_max_s: float = Field(
        default=60.0,
        gt=0,
        description="warm_prefixes: the warm-up's time bound (with shards, keep it under shard_ready_timeout_s)",
    )
    sessions: Literal["auto", "off"] = Field(
        default="auto",
        description="auto: when the log carries session ids, each session's turns go in order, each after the "
        "previous reply + the logged think time, with the conversation so far; off: every request on its own",
    )
    sweep: Sweep | None = Field(
        default=None, description="load levels replayed after the spec's own (pipeline/spec/sweep.py)"
    )
    arms: Arms | None = Field(
        default=None,
        description="the claim's own benchmark at claim.conditions and the attribution ladder (pipeline/spec/arms.py)",
    )
    repeats: int = Field(
        default=1,
        ge=1,
        le=MAX_REPEATS,
        description="the production replay done N times in a row per candidate (each a full replay of the same "
        "plan): each run's figures are shown and the verdict's interval takes in the run-to-run spread",
    )
    until: Until | None = Field(
        default=None,
        description="resolved: repeat the replay until every claimed figure is decisive, within max_runs and "
        "max_minutes (pipeline/spec/until.py); instead of repeats",
    )
    candidates_side_by_side: bool = Field(
        default=True,
        description="measure the candidates at the same time, each partition run in a process of its own, where "
        "each is its own endpoint (distinct base URLs); false: one after another",
    )

    @field_validator("request")
    @classmethod
    def _known_request_fields(cls, rules: dict[str, RequestFieldRule]) -> dict[str, RequestFieldRule]:
        unknown = sorted(set(rules) - set(REQUEST_FIELDS))
        if unknown:
            raise ValueError(f"unknown request field(s) {unknown}; known: {', '.join(REQUEST_FIELDS)}")
        caps = [name for name in LOGGED_CAPS if name in rules]
        if caps:
            raise ValueError(
                f"{' and '.join(caps)}: never sent as logged: the replay's max_tokens is the planned output length "
                "(workload.prompts.min_tokens also fixes it)"
            )
        return rules

    @field_validator("sweep")
    @classmethod
    def _sweep_turns_the_modes_knob(cls, value: Sweep | None, info: ValidationInfo) -> Sweep | None:
        return check_sweep_mode(value, info.data["mode"]) if "mode" in info.data else value

    @model_validator(mode="after")
    def _mode_needs(self) -> Replay:
        if self.mode == "concurrency" and self.concurrency is None:
            raise ValueError("mode concurrency needs concurrency")
        if self.mode == "rate" and self.rate_per_s is None:
            raise ValueError("mode rate needs rate_per_s")
        if self.until is not None and self.repeats > 1:
            raise ValueError(
                f"workload.replay: until and repeats ({self.repeats}) both set: `until: resolved` decides the number "
                "of runs (its max_runs bounds it); drop repeats"
            )
        if self.until is not None and isinstance(self.shards, int) and self.shards > 1:
            raise ValueError(
                f"workload.replay: until needs shards: 1 (got {self.shards}): the decision after each run reads every "
                "request of it"
            )
        return self


class Workload(Strict):
    log: LogSource
    max_reject_rate: float = Field(default=0.05, ge=0, le=1)
    sample: Sample = Sample()
    replay: Replay = Replay()
    profile: ProfileSettings = ProfileSettings()
    production: ProductionConditions = ProductionConditions()
    proxy_tolerance: ProxyTolerance = ProxyTolerance()
    prompts: Prompts = Prompts()

    @model_validator(mode="after")
    def _stratified_has_no_arrival_process(self) -> Workload:
        if self.sample.mode == "stratified" and self.replay.mode == "trace":
            raise ValueError("a stratified sample keeps no arrival process: use replay.mode concurrency")
        return self
