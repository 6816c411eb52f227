"""Before any replay: can every candidate be reached, and does it accept the key it is given?

Without this, a candidate that is down fails deep inside the first Dagster run with the HTTP
client's own words (`ConnectError: [Errno 111] Connection refused`), naming neither the
candidate nor its URL, and a refused key shows up only as a page of `http_4xx` errors after the
replay. One GET of the models list per candidate, before the first run, says which candidate, at
which URL, and why — and for a 401/403, which environment variable held the refused key (the
key itself is never printed).
"""

from __future__ import annotations

import httpx

from pipeline.http_retry import ATTEMPTS, retryable_status, retrying_client
from pipeline.replay.pacing.engine import Target

TIMEOUT_S = 10.0
KEY_REFUSED = frozenset({401, 403})


class CandidateUnreachable(ValueError):
    """A candidate that cannot be replayed against; the message names it, its URL and the cause."""


def models_response(client: httpx.Client, target: Target) -> httpx.Response:
    """GET `{base_url}/models` with the candidate's headers; a transport failure or a refused key
    raises `CandidateUnreachable` with the candidate's name, URL and cause. Other statuses are
    returned as they are (the fingerprint decides what they mean)."""
    url = target.base_url.rstrip("/") + "/models"
    try:
        response = client.get(url, headers=target.headers())
    except httpx.HTTPError as exc:
        cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise CandidateUnreachable(
            f"candidate {target.candidate!r} at {target.base_url} cannot be reached ({cause}, {ATTEMPTS} tries)"
        ) from exc
    if response.status_code in KEY_REFUSED:
        raise CandidateUnreachable(key_refused_message(target, response.status_code))
    return response


def key_refused_message(target: Target, status: int) -> str:
    where = f"candidate {target.candidate!r} at {target.base_url} answered HTTP {status}"
    if target.api_key_env is None:
        return f"{where}: it wants an API key, and the spec names none (set the candidate's api_key_env)"
    return f"{where}: the key in the environment variable {target.api_key_env} was refused"


def check_reachable(target: Target, timeout_s: float = TIMEOUT_S) -> None:
    """Raise `CandidateUnreachable` unless the candidate answers its models list with the key (a
    429, a 5xx or a reset is retried with backoff first: pipeline/http_retry.py)."""
    with retrying_client(timeout_s) as client:
        response = models_response(client, target)
    if not response.is_success:
        reason = f" {response.reason_phrase}" if response.reason_phrase else ""
        raise CandidateUnreachable(
            f"candidate {target.candidate!r} at {target.base_url} answered HTTP {response.status_code}{reason} to "
            f"GET {response.request.url.path}"
            + (f" after {ATTEMPTS} tries" if retryable_status(response.status_code) else "")
        )
