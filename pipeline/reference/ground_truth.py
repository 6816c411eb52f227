"""Client-measured timings against the server's own timeline, request by request.

Both sides read `time.perf_counter_ns()`, which on Linux is CLOCK_MONOTONIC: one clock for all
processes of a machine (`monotonic_clock_is_shared` checks it), so the readings subtract
directly. For each request joined on its id (`x-loadproof-request-id`):

    ttft_error = client TTFT − server TTFT
               = (server arrival − client send)          request transit
               + (client first token − server first token) response transit
    e2e_error  = client E2E − server E2E (same, with the ends)

Both errors are ≥ 0 by causality; they are what the client adds to the truth.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Comparison:
    request_id: str
    request_transit_ns: int
    first_token_transit_ns: int
    end_transit_ns: int

    @property
    def ttft_error_ns(self) -> int:
        return self.request_transit_ns + self.first_token_transit_ns

    @property
    def e2e_error_ns(self) -> int:
        return self.request_transit_ns + self.end_transit_ns


def compare(raw_rows: list[dict], timeline_rows: list[dict]) -> list[Comparison]:
    """Join successful raw-timing rows with the server timeline on request id."""
    server = {row["request_id"]: row for row in timeline_rows if row.get("request_id")}
    out = []
    for row in raw_rows:
        truth = server.get(row["request_id"])
        if row["status"] != "ok" or truth is None or truth.get("first_token_ns") is None:
            continue
        out.append(
            Comparison(
                request_id=row["request_id"],
                request_transit_ns=truth["arrival_ns"] - row["t_sent_ns"],
                first_token_transit_ns=row["t_first_token_ns"] - truth["first_token_ns"],
                end_transit_ns=row["t_end_ns"] - truth["end_ns"],
            )
        )
    return out


def monotonic_clock_is_shared() -> bool:
    """True when a child process's perf_counter_ns lies between two readings of ours."""
    before = time.perf_counter_ns()
    child = int(
        subprocess.run(
            [sys.executable, "-c", "import time; print(time.perf_counter_ns())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    after = time.perf_counter_ns()
    return before <= child <= after
