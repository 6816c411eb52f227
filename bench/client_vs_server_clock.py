"""How far the replay client's TTFT and E2E are from the server's own timeline.

Starts the reference endpoint with a timeline file, replays closed-loop streams at each
concurrency, joins client raw timings with the server timeline on request id, and prints the
client's absolute error (p50 / p99 / max, ms) for TTFT and E2E, split into request transit
(server arrival − client send) and response transit (client receipt − server hand-off).

    .venv/bin/python bench/client_vs_server_clock.py [--profile large-gpu] [--concurrency 1,16,64,256] [--pin]

`--pin` runs the server on one core and the client on another (CPU affinity; the server
inherits the core it is started on), so neither waits for the other's CPU.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path

from pipeline.reference import ReferenceServer
from pipeline.reference.ground_truth import compare, monotonic_clock_is_shared
from pipeline.reference.timeline import read_timeline
from pipeline.replay.pacing.engine import ReplaySettings, ReplayStats, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.tokens import count_message_tokens

SERVER_CPU, CLIENT_CPU = 1, 0


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_pressure() -> str:
    """The kernel's CPU pressure (PSI): the share of time runnable tasks waited for a CPU. Above a
    few per cent, other processes, not this client, decide how late every stamp is."""
    try:
        return Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except OSError:
        return "unavailable"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def plan_of(tag: str, requests: int, max_tokens: int) -> list[PlannedRequest]:
    """`requests` copies of one support question (ids `<tag>-<n>`), each answered in `max_tokens`."""
    messages = [{"role": "user", "content": "Why was my card declined at the shop today? " * 8}]
    return [
        PlannedRequest(f"{tag}-{i}", None, messages, max_tokens, count_message_tokens(messages))
        for i in range(requests)
    ]


def closed_loop(
    plan: list[PlannedRequest], server: ReferenceServer, concurrency: int, journal: Journal, run_id: str = "bench"
) -> ReplayStats:
    """Every request of `plan` to the reference endpoint, `concurrency` streams at a time (the
    clock and wire benches' replay, and their tests': tests/integration/test_ground_truth.py and
    test_wire_capture.py)."""
    settings = ReplaySettings(mode="concurrency", concurrency=concurrency, request_timeout_s=120)
    return run_replay(plan, Target("ref", server.base_url, "reference-model"), settings, run_id, journal)


def replay(
    server: ReferenceServer, plan: list[PlannedRequest], concurrency: int, journal_path: Path
) -> tuple[ReplayStats, float, float, list[dict]]:
    """One closed-loop replay: its stats, the client's and the server's CPU seconds, its rows."""
    assert server._process is not None  # the bench reads the server's CPU use; no public accessor
    server_pid = server._process.pid
    server_before, client_before = cpu_s(server_pid), time.process_time()
    with Journal(journal_path) as journal:
        stats = closed_loop(plan, server, concurrency, journal)
    client, server_cpu = time.process_time() - client_before, cpu_s(server_pid) - server_before
    return stats, client, server_cpu, journal_to_table(journal_path).to_pylist()


def run(profile: str, concurrency: int, requests: int, max_tokens: int, folder: Path, pin: bool) -> None:
    plan = plan_of(f"c{concurrency}", requests, max_tokens)
    timeline = folder / f"timeline-{concurrency}.jsonl"
    if pin:
        os.sched_setaffinity(0, {SERVER_CPU})  # the server process inherits this core
    with ReferenceServer(profile, timeline_path=timeline) as server:
        if pin:
            os.sched_setaffinity(0, {CLIENT_CPU})
        stats, client_cpu, server_cpu, rows = replay(server, plan, concurrency, folder / f"journal-{concurrency}.jsonl")
    pairs = compare(rows, read_timeline(timeline))
    ms = 1e6
    series = {
        "ttft |error|": [abs(p.ttft_error_ns) / ms for p in pairs],
        "e2e |error|": [abs(p.e2e_error_ns) / ms for p in pairs],
        "request transit": [p.request_transit_ns / ms for p in pairs],
        "first-token transit": [p.first_token_transit_ns / ms for p in pairs],
    }
    if rows and rows[0].get("t_send_call_ns") is not None:  # set-up and pool wait, kept out of the TTFT
        by_id = {r["request_id"]: r for r in rows}
        call_to_write = {
            p.request_id: by_id[p.request_id]["t_sent_ns"] - by_id[p.request_id]["t_send_call_ns"] for p in pairs
        }
        series["call → write"] = [ns / ms for ns in call_to_write.values()]
        # the same requests timed from the call, as the send was stamped before issue 19
        series["ttft |error| (call)"] = [abs(p.ttft_error_ns + call_to_write[p.request_id]) / ms for p in pairs]
    ttft = sorted(r["ttft_ms"] for r in rows if r["ttft_ms"] is not None)
    print(
        f"concurrency {concurrency:4d} (CPU pressure {cpu_pressure()}): {len(pairs)}/{requests} joined, "
        f"errors {stats.errors}, "
        f"peak in flight {stats.peak_in_flight}, client TTFT p50 {pct(ttft, 50):.1f} ms, wall {stats.wall_s:.1f} s"
        + (
            f", pool {stats.pool_connections} connections opened in {stats.pool_setup_ms:.1f} ms before the start"
            if hasattr(stats, "pool_connections")
            else ""
        )
    )
    print(
        f"    CPU busy over the replay: server {server_cpu / stats.wall_s:.0%} of a core, "
        f"client {client_cpu / stats.wall_s:.0%} (a saturated server stamps its arrival late: request transit)"
    )
    for name, values in series.items():
        print(f"    {name:20s} p50 {pct(values, 50):7.3f}  p99 {pct(values, 99):7.3f}  max {max(values):7.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="large-gpu")
    parser.add_argument("--concurrency", default="1,16,64,256")
    parser.add_argument("--requests-per-stream", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--pin", action="store_true", help="server on CPU 1, client on CPU 0")
    args = parser.parse_args()
    print(f"perf_counter_ns shared across processes (CLOCK_MONOTONIC): {monotonic_clock_is_shared()}")
    with tempfile.TemporaryDirectory() as tmp:
        for concurrency in (int(c) for c in args.concurrency.split(",")):
            requests = max(64, concurrency * args.requests_per_stream)
            run(args.profile, concurrency, requests, args.max_tokens, Path(tmp), args.pin)


if __name__ == "__main__":
    main()
