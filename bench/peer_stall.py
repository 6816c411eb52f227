"""Whose stall is it? loadproof's replay alone against one endpoint (GuideLLM's mock by default)
at 50 req/s, with the stall probe (bench/stall_probe/) in both the client and the endpoint.

In two quiet runs of bench/peers.py the first tool against GuideLLM's mock at 50 req/s showed one
~170 ms pause ~6.3 s in: several requests in a row, each sent on time, got their first token late.
This runs each case --repeats times on a fresh endpoint:
  cold   the first run against a fresh endpoint, no warm-up (as peers.py did before issue 19)
  again  a second run against the same endpoint, right after `cold`
  warm   a fresh endpoint, warmed by an unmeasured burst (--warm-up-s), then the measured run
and, for every episode of slow first tokens, prints what each process did meanwhile: collections
(gc.callbacks) and gaps in which a watcher thread was not run (with the CPU its process used then),
on the shared monotonic clock, plus whether the slow requests were sent on time, whether they rode
new connections, and whether their response headers (first byte) were late too.

    .venv/bin/python bench/peer_stall.py --repeats 3 --duration-s 10
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_tools import REPO_ROOT, Load, LoadproofTool, child_env  # noqa: E402
from peers import Endpoint, percentile, probe_events, stall_probe_env  # noqa: E402

SLOW_TTFT_MS = 20.0  # a first token this late on a zero-delay endpoint is a pause, not service time
EPISODE_JOIN_NS = 300_000_000


def run_client(root_url: str, rate: float, duration_s: float, out: Path, probe: Path) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    probe.mkdir(parents=True, exist_ok=True)
    command, env = LoadproofTool().command(Load(rate, duration_s, None, root_url), out)
    with (out / "client.log").open("wb") as log:
        subprocess.run(
            command, cwd=REPO_ROOT, env=child_env({**env, **stall_probe_env(probe, "client")}), stdout=log, check=True
        )
    return [json.loads(line) for line in (out / "raw_timings.jsonl").open()]


def overlapping(events: list[dict], low_ns: int, high_ns: int) -> list[dict]:
    return [e for e in events if e["t_ns"] <= high_ns and e["t_ns"] + e["ms"] * 1e6 >= low_ns]


def describe(event: dict, origin_ns: int) -> str:
    at = (event["t_ns"] - origin_ns) / 1e9
    if event["event"] == "gc":
        return f"gen{event['generation']} collection {event['ms']:.0f} ms at {at:.2f} s"
    held = "held the GIL (ran)" if event["cpu_ms"] >= 0.5 * event["ms"] else "off the CPU"
    return f"{event['ms']:.0f} ms gap at {at:.2f} s, process CPU {event['cpu_ms']:.0f} ms ({held})"


def analyse(case: str, rows: list[dict], client_probe: Path, endpoint_probe: Path, endpoint_pid: int) -> dict:
    """One run's figures and its episodes of slow first tokens, each with what the two processes did."""
    ok = [row for row in rows if row["status"] == "ok" and row["ttft_ms"] is not None]
    origin = min(row["t_sent_ns"] for row in ok)
    client, endpoint = probe_events(client_probe, "client"), probe_events(endpoint_probe, "endpoint", endpoint_pid)
    run_low, run_high = origin, max(row["t_end_ns"] for row in ok)
    slow = sorted((row for row in ok if row["ttft_ms"] > SLOW_TTFT_MS), key=lambda row: row["t_sent_ns"])
    episodes: list[list[dict]] = []
    for row in slow:
        if episodes and row["t_sent_ns"] - episodes[-1][-1]["t_first_token_ns"] < EPISODE_JOIN_NS:
            episodes[-1].append(row)
        else:
            episodes.append([row])
    summary = {
        "case": case,
        "requests": len(rows),
        "errors": len(rows) - len(ok),
        "lag_p99_ms": round(percentile([row["schedule_lag_ms"] for row in rows], 99), 2),
        "ttft_p50_ms": round(percentile([row["ttft_ms"] for row in ok], 50), 2),
        "ttft_p99_ms": round(percentile([row["ttft_ms"] for row in ok], 99), 2),
        "ttft_max_ms": round(max(row["ttft_ms"] for row in ok), 1),
        "client_gen2": [
            describe(e, origin) for e in overlapping(client, run_low, run_high) if e.get("generation") == 2
        ],
        "endpoint_gen2": [
            describe(e, origin) for e in overlapping(endpoint, run_low, run_high) if e.get("generation") == 2
        ],
        "episodes": [],
    }
    for episode in episodes:
        low = min(row["t_sent_ns"] for row in episode)
        high = max(row["t_first_token_ns"] for row in episode)
        in_window = [row for row in ok if row["t_sent_ns"] <= high and row["t_first_token_ns"] >= low]
        summary["episodes"].append(
            {
                "at_s": round((low - origin) / 1e9, 2),
                "slow_requests": len(episode),
                "requests_in_window": len(in_window),
                "ttft_ms": [round(row["ttft_ms"]) for row in episode],
                "max_lag_ms": round(max(row["schedule_lag_ms"] for row in episode), 2),
                "new_connections": sum(1 for row in episode if row["connect_ms"] is not None),
                "headers_late_ms": [round((row["t_first_byte_ns"] - row["t_sent_ns"]) / 1e6) for row in episode],
                "client": [describe(e, origin) for e in overlapping(client, low, high)],
                "endpoint": [describe(e, origin) for e in overlapping(endpoint, low, high)],
            }
        )
    return summary


def print_run(summary: dict) -> None:
    print(
        f"{summary['case']:<7} sent {summary['requests']}, errors {summary['errors']}, lag p99 "
        f"{summary['lag_p99_ms']} ms, TTFT p50/p99/max {summary['ttft_p50_ms']}/{summary['ttft_p99_ms']}/"
        f"{summary['ttft_max_ms']} ms; gen2 collections during the run: client "
        f"[{'; '.join(summary['client_gen2'])}], endpoint [{'; '.join(summary['endpoint_gen2'])}]",
        flush=True,
    )
    for episode in summary["episodes"]:
        print(
            f"    {episode['at_s']:>6.2f} s: {episode['slow_requests']} of {episode['requests_in_window']} "
            f"requests in the window slow, TTFT {episode['ttft_ms']} ms, lag <= {episode['max_lag_ms']} ms, "
            f"{episode['new_connections']} on new connections, headers after {episode['headers_late_ms']} ms"
        )
        print(f"        client:   {'; '.join(episode['client']) or 'nothing'}")
        print(f"        endpoint: {'; '.join(episode['endpoint']) or 'nothing'}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="whose stall: loadproof alone against an endpoint, probed")
    parser.add_argument("--endpoint", default="guidellm-mock")
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--duration-s", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warm-up-s", type=float, default=2.0, help="the `warm` case's unmeasured burst")
    parser.add_argument("--cases", default="cold,again,warm")
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--json-out", type=Path, default=None)
    args = parser.parse_args(argv)
    cases = args.cases.split(",")
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="loadproof-stall-"))
    print(f"work: {work}  (load average {os.getloadavg()[0]:.2f})", flush=True)
    results = []
    for repeat in range(args.repeats):
        for case in ("cold", "warm"):
            if case not in cases and not (case == "cold" and "again" in cases):
                continue
            folder = work / f"{repeat}-{case}"
            probe = folder / "probe"
            probe.mkdir(parents=True, exist_ok=True)
            endpoint = Endpoint(args.endpoint, folder, env=stall_probe_env(probe, "endpoint"))
            try:
                if case == "warm":
                    run_client(endpoint.root_url, args.rate, args.warm_up_s, folder / "warm-up", probe / "warm-up")
                runs = [case] + (["again"] if case == "cold" and "again" in cases else [])
                for name in runs:
                    if name not in cases:
                        continue
                    client_probe = probe / name
                    rows = run_client(endpoint.root_url, args.rate, args.duration_s, folder / name, client_probe)
                    summary = analyse(name, rows, client_probe, probe, endpoint.process.pid)
                    summary["repeat"] = repeat
                    results.append(summary)
                    print_run(summary)
            finally:
                endpoint.stop()
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
