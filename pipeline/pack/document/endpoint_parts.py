"""The parts of the evidence pack about the endpoint and the client rather than the figures:
whether the client kept its schedule (calibration, roofline), what the endpoint is
(fingerprints), where its token counts and the client's disagree, and the server's own view
(prefix-cache hits, its TTFT histogram beside the client's). Built on `parts.py`'s conventions
(`Part`, `TableRow`, `MISSING`)."""

from __future__ import annotations

from typing import Literal

from pydantic import MISSING

from pipeline.pack.document.parts import Count, Number, Part, Sha256, TableRow


class RooflineStep(Part):
    """One constant-rate step of the client roofline: the rate asked for and what the client achieved."""

    rate_per_s: Number
    requests: Count
    errors: Count
    schedule_lag_ms_p99: Number | None
    sends_per_s: Number | None
    events_per_s: Number | None
    sustained: bool


class ClientRoofline(Part):
    """The client's ceiling on this host against the zero-delay echo (pipeline/replay/client_validity/roofline.py):
    the highest sustained step's achieved sends/s and SSE events/s, and the run's peak demand as a
    share of each (None where no step was sustained, or the plan has no schedule)."""

    lag_threshold_ms: Number
    events_per_request: Count
    step_s: Number
    steps: list[RooflineStep]
    stopped_by: Literal["step not sustained", "time budget", "rates exhausted"]
    sends_per_s: Number | None
    events_per_s: Number | None
    lower_bound: bool
    peak_demand_sends_per_s: Number | None
    peak_demand_events_per_s: Number | None
    peak_sends_share: Number | None
    peak_events_share: Number | None


class ClientCalibration(TableRow):
    """client_calibration.json: the plan's busiest stretch replayed against a zero-delay echo."""

    client_limited: bool
    peak_rate_per_s: Number | None
    schedule_lag_ms_p99: Number | None
    overhead_ttft_ms_p50: Number | None
    roofline: ClientRoofline | MISSING = MISSING


class ClientValidity(Part):
    """Whether the load generator kept the schedule (a client-limited run measures the client)."""

    schedule_lag_ms_p99: Number | None
    client_limited: bool
    threshold_ms: Number | MISSING = MISSING
    calibration: ClientCalibration | None | MISSING = MISSING


class EngineFacts(TableRow):
    """What the serving engine says about itself (pipeline/replay/endpoint/engine_facts.py): where it was
    read, the weights' quantisation as the server names it and its canonical precision and bits
    (pipeline/precision_names.py), the slots it batches over; each server adds its own facts."""

    source: str
    server: str
    quantization: str | None
    precision: str | None
    weight_bits: Count | None
    slots: Count | None


class EndpointFingerprint(TableRow):
    """endpoint_fingerprint.json: what the endpoint advertised and how it answered the probes."""

    candidate: str
    model: str
    model_version: str
    system_fingerprint: str | None
    fingerprint_sha256: Sha256
    engine: EngineFacts | None | MISSING = MISSING  # None: the server says nothing of itself; absent before issue 26


class TokenAgreement(TableRow):
    """Where the server's usage and the client's own token count disagree (token_agreement.sql)."""

    candidate: str
    requests_compared: Count
    output_disagreeing: Count
    output_abs_diff_p50: Count | None
    output_abs_diff_max: Count | None
    prompt_disagreeing: Count
    prompt_abs_diff_p50: Count | None
    prompt_abs_diff_max: Count | None


class PrefixCacheHits(Part):
    """The prefix-cache hit rate one candidate's server reported (sql/prefix_cache_hits.sql:
    cached ÷ prompt tokens of the steady window's successful requests that reported
    `cached_tokens`), beside the profile's prefix-reuse share, the most a cache could hit."""

    candidate: str
    requests_ok: Count
    requests_reporting: Count
    cached_tokens: Count
    prompt_tokens: Count
    hit_rate: Number | None  # None: the server reported no cached_tokens
    prefix_reuse_share: Number | None  # the profile's prefix_block_reuse_share (the ceiling)


class ColdCacheNote(Part):
    """Whether the replayed window, seen alone, reuses fewer prefix blocks than the whole log
    (pipeline/analysis/endpoint_view/server_view.py `cold_cache_note`): then a cold cache undercounts the hits
    production gets; `warm_prefixes` says whether the replay first sent the earlier requests whose
    prefixes the window reuses (pipeline/plan/warm_prefixes.py), and how many."""

    window_span_s: Number | None
    log_span_s: Number | None
    window_reuse_share: Number
    log_reuse_share: Number
    cold_cache_undercounts: bool
    warm_prefixes: bool
    warm_up_requests: Count


class ServerTimings(TableRow):
    """One candidate's requests of one kind (tool call, structured output, reasoning, text): the
    client's TTFT and TPOT beside the server's own per-request timings (llama.cpp's `timings`:
    prefill ms, decode ms per token) and the client − server gap, medians (sql/server_timings.sql)."""

    candidate: str
    request_kind: str
    requests: Count
    requests_with_cache_hit: Count
    client_ttft_ms_p50: Number | None
    server_prompt_ms_p50: Number | None
    ttft_gap_ms_p50: Number | None
    ttft_gap_ms_p95: Number | None
    client_tpot_ms_p50: Number | None
    server_tpot_ms_p50: Number | None
    tpot_gap_ms_p50: Number | None


class ServerTtft(Part):
    """One candidate's TTFT as its server's own histogram has it (percentiles estimated linearly
    within a bucket) beside the client's over the same production replay (pipeline/pack/
    server_view.py); `large_gap`: they differ beyond the histogram's resolution, a client-validity
    note (the client may have measured itself rather than the server)."""

    candidate: str
    server_requests: Count
    client_requests: Count
    server_ttft_ms_p50: Number | None
    client_ttft_ms_p50: Number | None
    server_ttft_ms_p95: Number | None
    client_ttft_ms_p95: Number | None
    large_gap: bool
    # the server's E2E histogram (where it exports one) beside the client's E2E: None without one
    server_e2e_ms_p50: Number | None = None
    client_e2e_ms_p50: Number | None = None
    server_e2e_ms_p95: Number | None = None
    client_e2e_ms_p95: Number | None = None


class GpuEnergy(Part):
    """One candidate's GPU telemetry over the production replay's steady window (its DCGM
    exporter, `gpu_metrics_url`; pipeline/analysis/endpoint_view/gpu_view.py): utilisation, mean power, and the
    joules per output token (mean power ÷ the window's output tokens per second)."""

    candidate: str
    scrapes: Count
    gpus: Count
    seconds: Number  # between the window's first and last GPU scrape
    gpu_util_pct_mean: Number | None
    energy_j: Number | None  # the energy counter's increase over those seconds; None without one
    mean_power_w: Number | None
    power_source: Literal["energy counter", "power gauge"] | None
    output_tokens_per_s: Number | None
    joules_per_output_token: Number | None


class ServerLoadLevel(Part):
    """The server's queue and KV-cache use over one load level's replay of one candidate (the
    production replay's, then each sweep level's; pipeline/analysis/endpoint_view/server_view.py `server_levels`):
    mean and maximum over the /metrics scrapes sent between the level's first send and last end."""

    candidate: str
    load_level: Number | None  # None: the production replay without a sweep
    load_level_label: str
    production: bool
    scrapes: Count
    running_mean: Number | None
    running_max: Number | None
    waiting_mean: Number | None
    waiting_max: Number | None
    kv_cache_use_mean: Number | None
    kv_cache_use_max: Number | None
    preemptions: Number | None  # the server's pre-emption counter's increase over the level
    prefix_cache_hit_rate: Number | None  # the server's own: hit over queried prompt tokens
