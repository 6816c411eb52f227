"""The one retry rule for loadproof's own calls to a candidate outside the replay: the endpoint
fingerprint's models list and probes, the engine facts (`/props`, …), the server-metrics scrape
and the `/tokenize` endpoint a plan counts through.

Vendors answer 429 and 503 under load, and a connection is sometimes reset; one such answer to a
probe used to end the whole run with the HTTP client's words, although the error rate is one of
the figures a buyer came to measure. Every `httpx.Client` made with `retrying_transport()` retries
a 429 (after its `Retry-After`, capped), any 5xx and a reset or refused connection, with bounded
exponential backoff; what is still failing after the last try is returned (or raised) as it came,
and `failure_line` says it in one line naming the candidate and the status it gave.

The replay itself never goes through here: its retries are the spec's `workload.replay.retries`,
off by default, so that every failure is counted in the error rate."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

ATTEMPTS = 5  # the first try and four retries
FIRST_DELAY_S = 0.25  # then doubled: 0.25, 0.5, 1, 2 s (3.75 s at most without Retry-After)
MAX_DELAY_S = 4.0
MAX_RETRY_AFTER_S = 10.0  # a longer Retry-After is waited this long, not more
# a reset, a refused or dropped connection; a timeout is not retried (it already waited its bound)
TRANSIENT_ERRORS = (httpx.ConnectError, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)


def retryable_status(status: int) -> bool:
    return status == 429 or 500 <= status <= 599


def retry_after_s(value: str | None) -> float | None:
    """A Retry-After's delta-seconds (an HTTP date is not converted: the backoff applies)."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None


@dataclass
class RetryingTransport(httpx.BaseTransport):
    """An httpx transport that sends each request up to `attempts` times while it fails transiently."""

    attempts: int = ATTEMPTS
    first_delay_s: float = FIRST_DELAY_S
    max_delay_s: float = MAX_DELAY_S
    max_retry_after_s: float = MAX_RETRY_AFTER_S
    sleep: Callable[[float], object] = time.sleep
    inner: httpx.BaseTransport = field(default_factory=httpx.HTTPTransport)

    def delay_s(self, retry: int, retry_after: str | None = None) -> float:
        """How long to wait before retry number `retry` (0-based): the Retry-After where given
        (capped), else the doubling backoff (capped)."""
        given = retry_after_s(retry_after)
        if given is not None:
            return min(given, self.max_retry_after_s)
        return min(self.first_delay_s * 2**retry, self.max_delay_s)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        for retry in range(self.attempts):
            last = retry == self.attempts - 1
            try:
                response = self.inner.handle_request(request)
            except TRANSIENT_ERRORS:
                if last:
                    raise
                self.sleep(self.delay_s(retry))
                continue
            if last or not retryable_status(response.status_code):
                return response
            response.read()  # free the connection before waiting
            response.close()
            self.sleep(self.delay_s(retry, response.headers.get("retry-after")))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def close(self) -> None:
        self.inner.close()


def retrying_transport(**settings) -> RetryingTransport:
    return RetryingTransport(**settings)


def retrying_client(timeout_s: float, retry: dict | None = None, **client_settings) -> httpx.Client:
    """An `httpx.Client` (no proxy from the environment: loopback and the spec's URLs only) whose
    requests are retried by the rule above; `retry` overrides its settings (`RetryingTransport`'s
    fields: fewer attempts, another sleep)."""
    transport = retrying_transport(**(retry or {}))
    return httpx.Client(timeout=timeout_s, trust_env=False, transport=transport, **client_settings)


class CandidateFailing(ValueError):
    """A candidate that kept failing one of loadproof's own calls after every retry; the message is
    one line naming the candidate, the call and the status it gave."""


def failure_line(candidate: str, base_url: str, what: str, cause: str) -> str:
    return (
        f"candidate {candidate!r} at {base_url}: {what} {cause} after {ATTEMPTS} tries "
        "(429, 5xx and resets are retried with backoff)"
    )


def check_status(response: httpx.Response, candidate: str, base_url: str, what: str) -> httpx.Response:
    """The response, unless its status is an error: then `CandidateFailing` in one line (not
    httpx's `raise_for_status` page with its link to MDN)."""
    if response.is_success:
        return response
    reason = f" {response.reason_phrase}" if response.reason_phrase else ""
    request = response.request
    call = f"{what} ({request.method} {request.url.path})"
    if retryable_status(response.status_code):
        raise CandidateFailing(failure_line(candidate, base_url, call, f"answered HTTP {response.status_code}{reason}"))
    raise CandidateFailing(
        f"candidate {candidate!r} at {base_url}: {call} answered HTTP {response.status_code}{reason}"
    )
