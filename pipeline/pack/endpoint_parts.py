"""The parts of the evidence pack about the endpoint and the client rather than the figures:
whether the client kept its schedule (calibration, roofline), what the endpoint is
(fingerprints), where its token counts and the client's disagree, and the server's own view
(prefix-cache hits, its TTFT histogram beside the client's). Built on `parts.py`'s conventions
(`Part`, `TableRow`, `MISSING`)."""

from __future__ import annotations

from typing import Literal

from pydantic import MISSING

from pipeline.pack.parts import Count, Number, Part, Sha256, TableRow


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
    """The client's ceiling on this host against the zero-delay echo (pipeline/replay/roofline.py):
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


class EndpointFingerprint(TableRow):
    """endpoint_fingerprint.json: what the endpoint advertised and how it answered the probes."""

    candidate: str
    model: str
    model_version: str
    system_fingerprint: str | None
    fingerprint_sha256: Sha256


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
