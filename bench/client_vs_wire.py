"""How far the replay client's send time, TTFT and E2E are from the loopback wire's.

Starts the reference endpoint and, at each concurrency, replays the same closed-loop plan twice:
once plain, once under a packet capture of the server's port on `lo` (bench/wire_capture.py).
The capture is read back into one exchange per request (bench/wire_reading.py) and joined to the
raw timings by the request-id header. The kernel stamps each packet as it passes the capture
tap, independent of both processes, so the wire is the truth here:

- send: the client's send stamp (mapped onto the capture's clock) − the request's last byte;
- TTFT: client TTFT − wire TTFT (request's last byte → the segment completing the first token
  event); E2E likewise to the segment ending the body. Each side is one clock's difference, so
  the monotonic → realtime mapping cancels out of both.

Printed per concurrency: p50 / p99 / max of each |error| (ms), the split of the TTFT error into
the client's send lead and its first-token receipt lag, the clock mapping's residual, and what
the capture cost: tcpdump's CPU, packets captured / dropped, the file's size, and the client's CPU
per request and TTFT p50 with the capture against without it.

    .venv/bin/python bench/client_vs_wire.py [--profile large-gpu] [--concurrency 1,16,64,256] [--pin]

Needs tcpdump (Debian: `apt-get install tcpdump`) and the right to capture (root or CAP_NET_RAW).
`--pin` runs the server and tcpdump on CPU 1 and the client on CPU 0. `--processes N` splits each
plan over N client processes (forked; each a closed loop of concurrency / N streams on its own event
loop, as `workload.replay.shards` splits a replay): how many streams one loop can stamp in time.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import resource
import tempfile
import time
from pathlib import Path

from bench.client_vs_server_clock import closed_loop, cpu_pressure, cpu_s, pct, plan_of, replay
from bench.wire_capture import Capture, CaptureReport
from bench.wire_reading import WirePair, join, read_capture
from pipeline.reference import ReferenceServer
from pipeline.replay.pacing.engine import ReplayStats
from pipeline.replay.recording.journal import Journal, journal_to_table

SERVER_CPU, CLIENT_CPU = 1, 0
MS = 1e6


def line(name: str, values_ns: list[float]) -> str:
    values = [v / MS for v in values_ns]
    return f"    {name:34s} p50 {pct(values, 50):8.3f}  p99 {pct(values, 99):8.3f}  max {max(values):8.3f} ms"


def client_ttft_p50(rows: list[dict]) -> float:
    return pct([r["ttft_ms"] for r in rows if r["ttft_ms"] is not None], 50)


def _one_process(plan: list, server: ReferenceServer, concurrency: int, journal_path: Path, results) -> None:
    with Journal(journal_path) as journal:
        stats = closed_loop(plan, server, concurrency, journal)
    results.put(dataclasses.asdict(stats))


def replay_split(
    server: ReferenceServer, plan: list, concurrency: int, journal_path: Path, processes: int
) -> tuple[ReplayStats, float, float, list[dict]]:
    """`replay` over `processes` forked client processes, each every `processes`-th request of the
    plan at concurrency / processes: the stats summed (wall: the longest), the children's CPU
    seconds, the server's, and every row."""
    if processes <= 1:
        return replay(server, plan, concurrency, journal_path)
    assert server._process is not None  # the bench reads the server's CPU use; no public accessor
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    paths = [journal_path.with_suffix(f".{index}.jsonl") for index in range(processes)]
    server_before = cpu_s(server._process.pid)
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    children = [
        context.Process(
            target=_one_process,
            args=(plan[index::processes], server, concurrency // processes, paths[index], results),
        )
        for index in range(processes)
    ]
    for child in children:
        child.start()
    reports = [results.get(timeout=600) for _ in children]
    for child in children:
        child.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    client_s = (after.ru_utime + after.ru_stime) - (children_before.ru_utime + children_before.ru_stime)
    stats = ReplayStats(
        planned=sum(r["planned"] for r in reports),
        sent=sum(r["sent"] for r in reports),
        errors=sum(r["errors"] for r in reports),
        peak_in_flight=sum(r["peak_in_flight"] for r in reports),
        wall_s=max(r["wall_s"] for r in reports),
    )
    rows = [row for path in paths for row in journal_to_table(path).to_pylist()]
    return stats, client_s, cpu_s(server._process.pid) - server_before, rows


def run(
    profile: str, concurrency: int, requests: int, max_tokens: int, folder: Path, pin: bool, processes: int = 1
) -> None:
    if pin:
        os.sched_setaffinity(0, {SERVER_CPU})  # the server process inherits this core
    with ReferenceServer(profile) as server:
        if pin:
            os.sched_setaffinity(0, {CLIENT_CPU})
        plain, plain_client_s, plain_server_s, plain_rows = replay_split(
            server,
            plan_of(f"plain{concurrency}", requests, max_tokens),
            concurrency,
            folder / f"plain-{concurrency}.jsonl",
            processes,
        )
        capture = Capture(server.port, folder / f"wire-{concurrency}.pcap", cpus={SERVER_CPU} if pin else None)
        with capture:
            stats, client_s, server_s, rows = replay_split(
                server,
                plan_of(f"wire{concurrency}", requests, max_tokens),
                concurrency,
                folder / f"wire-{concurrency}.jsonl",
                processes,
            )
        report = capture.report
    assert report is not None
    parse_started = time.perf_counter()
    reading = read_capture(report.path, server.port)
    parse_s = time.perf_counter() - parse_started
    pairs, missing = join(rows, reading, report.clock.to_wall)
    print(
        f"concurrency {concurrency:4d} over {processes} client process(es) (CPU pressure {cpu_pressure()}): "
        f"{len(pairs)}/{requests} joined to the wire, "
        f"{len(missing)} not found whole, errors {stats.errors}, peak in flight {stats.peak_in_flight}, "
        f"wall {stats.wall_s:.1f} s; client TTFT p50 {client_ttft_p50(rows):.1f} ms"
    )
    clock = report.clock
    print(
        f"    clock mapping: realtime − monotonic read ±{clock.before.half_width_ns} / ±{clock.after.half_width_ns} ns "
        f"before / after, drift {clock.drift_ns:+d} ns (residual ≤ {clock.tolerance_ns} ns on the send error only)"
    )
    if pairs:
        print_errors(pairs)
    print_cost(report, stats, requests, client_s, server_s, rows, parse_s, reading.connections_with_gaps)
    print(
        f"    without capture: wall {plain.wall_s:.2f} s, client CPU {plain_client_s / requests * 1e3:.3f} ms/request, "
        f"server {plain_server_s / plain.wall_s:.0%} of a core, client TTFT p50 {client_ttft_p50(plain_rows):.1f} ms"
    )


def print_errors(pairs: list[WirePair]) -> None:
    print(line("send |client − wire|", [abs(p.send_lead_ns) for p in pairs]))
    print(line("TTFT |client − wire|", [abs(p.ttft_error_ns) for p in pairs]))
    print(line("E2E  |client − wire|", [abs(p.e2e_error_ns) for p in pairs]))
    print(line("  send lead (wire last byte − send)", [p.send_lead_ns for p in pairs]))
    print(line("  first-token receipt lag", [p.first_token_lag_ns for p in pairs]))
    print(line("  every token's receipt lag", [lag for p in pairs for lag in p.token_lags_ns]))
    print(line("  end receipt lag", [p.end_lag_ns for p in pairs]))


def print_cost(
    report: CaptureReport,
    stats: ReplayStats,
    requests: int,
    client_s: float,
    server_s: float,
    rows: list[dict],
    parse_s: float,
    gaps: int,
) -> None:
    print(
        f"    with capture: wall {stats.wall_s:.2f} s, client CPU {client_s / requests * 1e3:.3f} ms/request, "
        f"server {server_s / stats.wall_s:.0%} of a core; tcpdump {report.cpu_s * 1e3:.1f} CPU ms "
        f"({report.cpu_s / stats.wall_s:.1%} of a core, {report.cpu_s / requests * 1e6:.0f} µs/request), "
        f"{report.packets_captured} packets ({report.packets_dropped} dropped by the kernel, "
        f"{gaps} connections with a gap), {report.bytes / 1e6:.1f} MB; read back in {parse_s:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="large-gpu")
    parser.add_argument("--concurrency", default="1,16,64,256")
    parser.add_argument("--requests-per-stream", type=int, default=2)
    parser.add_argument("--min-requests", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--pin", action="store_true", help="server and tcpdump on CPU 1, client on CPU 0")
    parser.add_argument("--processes", type=int, default=1, help="client processes, concurrency / N streams each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for concurrency in (int(c) for c in args.concurrency.split(",")):
            requests = max(args.min_requests, concurrency * args.requests_per_stream)
            run(args.profile, concurrency, requests, args.max_tokens, Path(tmp), args.pin, args.processes)


if __name__ == "__main__":
    main()
