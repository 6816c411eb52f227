"""loadproof's replay against AIPerf and GuideLLM, same zero-delay endpoint, same rate and cap.

Set-up once (separate virtualenvs under bench/.venvs/, git-ignored):
    bash bench/setup_peers.sh
Full benchmark (on a quiet machine; about 15 minutes at 10 s per run):
    .venv/bin/python bench/peers.py --rates 50,100,200,400,800,1200 --duration-s 20 \
        --tools loadproof,aiperf,guidellm --endpoints reference,guidellm-mock --json-out out/peers.json
Short smoke run:
    .venv/bin/python bench/peers.py --rates 50,200 --duration-s 4
The report of a saved run again:
    .venv/bin/python bench/peers.py --report-only --json-out out/peers.json

Each endpoint is started once, with bench/stall_probe/ logging its full (generation 2) garbage
collections, and warmed by an unmeasured burst from loadproof's client at the lowest rate
(--warm-up-s) before the first measured run. Tools run one after the other, interleaved per rate,
their order rotated by one place per rate (at 6 rates and 3 tools each goes first twice).

Per endpoint, rate and tool it prints: schedule-lag p99 (or the peer's nearest figure, see
bench/CHANGELOG.md), errors, sends per second achieved, client CPU seconds of the tool's whole
process tree (start-up included), the start-up part (CPU until its first send) and CPU per request
from first send to last end, peak RSS, endpoint CPU seconds and full collections during the run,
and TTFT/E2E p50/p95/p99. Then per tool the highest sustained rate (lag p99 <= 5 ms, no
client-side errors, at least 90 % of the planned requests sent), CPU per request per rate, at the
highest rate that every tool sustains how far each peer's percentiles are from loadproof's, and
one PASS/FAIL line per endpoint: loadproof's highest sustained rate >= 2x the best peer's (the exit
status is 1 on any FAIL).
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_report import SUSTAINED_LAG_MS, print_summary, print_table  # noqa: E402
from peer_tools import REPO_ROOT, TOOLS, Load, ToolResult, child_env, endpoint_command  # noqa: E402

WARM_UP_S = 10.0  # at the lowest rate: past the mock's first full collection (~170–340 requests in)
PROBE_DIR = Path(__file__).resolve().parent / "stall_probe"
SAMPLE_EVERY_S = 0.2
IDLE_SHARE = 0.05  # of a core: below it, the endpoint is serving nothing
IDLE_LIMIT_S = 60.0
TICK_S = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


# --- the client's process tree, read from /proc ------------------------------------------------


def _proc_stat(pid: int) -> tuple[int, float, int] | None:
    """(parent pid, CPU seconds, resident bytes) of one process, or None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        resident_pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK_S, resident_pages * PAGE_BYTES


def _tree(root: int) -> dict[int, tuple[float, int]]:
    """{pid: (CPU seconds, resident bytes)} for `root` and every descendant."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _proc_stat(int(entry))
            if stat is not None:
                stats[int(entry)] = stat
    members, frontier = {}, [root]
    while frontier:
        pid = frontier.pop()
        if pid in stats and pid not in members:
            members[pid] = stats[pid][1:]
            frontier.extend(child for child, stat in stats.items() if stat[0] == pid)
    return members


def run_measured(command: list[str], env: dict, log_path: Path, timeout_s: float) -> Measured:
    """Run a client to its end, sampling its process tree's CPU (for the start-up/steady split)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    cpu_seen: dict[int, float] = {}
    samples: list[tuple[float, float]] = [(started, 0.0)]
    peak_rss = 0
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        while process.poll() is None:
            members = _tree(process.pid)
            peak_rss = max(peak_rss, sum(rss for _, rss in members.values()))
            for pid, (cpu, _) in members.items():
                cpu_seen[pid] = max(cpu_seen.get(pid, 0.0), cpu)
            samples.append((time.monotonic(), sum(cpu_seen.values())))  # exited members keep their last
            if time.monotonic() - started > timeout_s:
                os.killpg(process.pid, signal.SIGKILL)
            time.sleep(SAMPLE_EVERY_S)
        code = process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    total = max(reaped, sum(cpu_seen.values()))
    samples.append((time.monotonic(), total))
    return Measured(code, total, peak_rss, time.monotonic() - started, samples)


@dataclass
class Measured:
    code: int
    cpu_s: float
    peak_rss: int
    wall_s: float
    cpu_samples: list[tuple[float, float]]  # (time.monotonic(), tree CPU seconds so far)

    def cpu_at(self, t_monotonic_s: float) -> float:
        """The tree's CPU seconds at an instant, interpolated between the 0.2 s samples."""
        samples = self.cpu_samples
        index = bisect.bisect_left(samples, (t_monotonic_s, -1.0))
        if index == 0:
            return samples[0][1]
        if index >= len(samples):
            return samples[-1][1]
        (t0, c0), (t1, c1) = samples[index - 1], samples[index]
        return c0 + (c1 - c0) * (t_monotonic_s - t0) / (t1 - t0) if t1 > t0 else c1


# --- the endpoint ------------------------------------------------------------------------------


class Endpoint:
    def __init__(self, kind: str, log_dir: Path, env: dict | None = None, probe: Path | None = None):
        self.kind = kind
        self.probe = probe  # the stall probe's folder, when `env` loads it
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.root_url = f"http://127.0.0.1:{self.port}"
        self._log = (log_dir / f"endpoint-{kind}.log").open("wb")
        self.process = subprocess.Popen(
            endpoint_command(kind, self.port),
            cwd=REPO_ROOT,
            env=child_env({"HF_HUB_OFFLINE": "1", **(env or {})}),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{kind} endpoint exited with {self.process.returncode}; see {self._log.name}")
            try:
                with urllib.request.urlopen(f"{self.root_url}/health", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{kind} endpoint not healthy after 120 s; see {self._log.name}")
            time.sleep(0.2)

    def cpu_s(self) -> float:
        return sum(cpu for cpu, _ in _tree(self.process.pid).values())

    def wait_idle(self, busy_share: float = IDLE_SHARE, limit_s: float = IDLE_LIMIT_S) -> float:
        """Wait until the endpoint uses under `busy_share` of a core over one second (the last tool's
        requests drained: a peer that fell behind leaves a backlog that the next tool would meet);
        at most `limit_s`. Returns the seconds waited."""
        started = time.monotonic()
        while time.monotonic() - started < limit_s:
            before = self.cpu_s()
            time.sleep(1.0)
            if self.cpu_s() - before < busy_share:
                break
        return time.monotonic() - started

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self._log.close()


# --- figures -----------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float | None:
    """Linear-interpolated percentile (p in 0..100), None for an empty list."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarise(
    tool: str,
    endpoint: str,
    load: Load,
    result: ToolResult | None,
    run: Measured,
    endpoint_cpu_s: float,
    endpoint_gc: list[dict],
    error: str = "",
) -> dict:
    row = {
        "endpoint": endpoint,
        "tool": tool,
        "rate": load.rate,
        "duration_s": load.duration_s,
        "exit_code": run.code,
        "client_cpu_s": round(run.cpu_s, 2),
        "peak_rss_mb": round(run.peak_rss / 2**20, 1),
        "wall_s": round(run.wall_s, 1),
        "endpoint_cpu_s": round(endpoint_cpu_s, 2),
        # the endpoint's own full collections during this run (count, ms): a pause of the endpoint
        "endpoint_gen2": len(endpoint_gc),
        "endpoint_gen2_ms": round(sum(event["ms"] for event in endpoint_gc), 1),
        "failure": error,
    }
    if result is None:
        return {**row, "sustained": False}
    planned = int(load.rate * load.duration_s)
    row.update(
        requests=result.requests,
        errors=result.errors,
        incomplete=result.incomplete,
        lag_kind=result.lag_kind,
        note=result.note,
        sends_per_s=round((len(result.lag_ms) - 1) / result.send_span_s, 1) if result.send_span_s else None,
    )
    if result.first_send_s is not None and result.last_end_s is not None and result.requests:
        startup = run.cpu_at(result.first_send_s)
        steady = run.cpu_at(result.last_end_s) - startup
        row.update(
            client_cpu_startup_s=round(startup, 2),
            client_cpu_steady_s=round(steady, 2),
            cpu_ms_per_request=round(steady * 1e3 / result.requests, 3),
            cpu_ms_per_request_all=round(run.cpu_s * 1e3 / result.requests, 3),
        )
    for name, values in (("lag_ms", result.lag_ms), ("ttft_ms", result.ttft_ms), ("e2e_ms", result.e2e_ms)):
        for p in (50, 95, 99):
            value = percentile(values, p)
            row[f"{name}_p{p}"] = round(value, 3) if value is not None else None
    row["sustained"] = (
        run.code == 0
        and result.errors == 0
        and row["lag_ms_p99"] is not None
        and row["lag_ms_p99"] <= SUSTAINED_LAG_MS
        and result.requests >= 0.9 * planned
    )
    return row


def stall_probe_env(folder: Path, name: str, watch: bool = True) -> dict:
    """Environment that loads bench/stall_probe/ into a Python process (see its docstring)."""
    path = os.pathsep.join(p for p in (str(PROBE_DIR), os.environ.get("PYTHONPATH", "")) if p)
    env = {"PYTHONPATH": path, "LOADPROOF_STALL_PROBE": str(folder), "LOADPROOF_STALL_PROBE_NAME": name}
    return {**env, "LOADPROOF_STALL_PROBE_WATCH": "1" if watch else "0"}


def probe_events(folder: Path, name: str, pid: int | None = None) -> list[dict]:
    """The probe's events for one process name (and pid: an endpoint's helper processes are left out)."""
    events = []
    for path in folder.glob(f"{name}-{pid or '*'}.jsonl"):
        events += [json.loads(line) for line in path.open() if '"start"' not in line]
    return sorted(events, key=lambda event: event["t_ns"])


def warm_up(endpoint: Endpoint, rate: float, seconds: float, out: Path) -> None:
    """An unmeasured burst from loadproof's client, so that no tool meets the endpoint's first-time
    costs: GuideLLM's mock makes its first full collection (~140 ms of CPU, every request in flight
    waits) ~170–340 requests after it starts (bench/CHANGELOG.md, "Whose stall")."""
    out.mkdir(parents=True, exist_ok=True)
    command, env = TOOLS["loadproof"]().command(Load(rate, seconds, None, endpoint.root_url), out)
    started = time.monotonic()
    code = subprocess.run(
        command, cwd=REPO_ROOT, env=child_env(env), stdout=(out / "client.log").open("wb"), stderr=subprocess.STDOUT
    ).returncode
    print(
        f"  warmed {endpoint.kind}: {seconds:g} s at {rate:g} req/s (exit {code}, {time.monotonic() - started:.1f} s)",
        flush=True,
    )


def start_endpoint(kind: str, folder: Path, warm_rate: float, args: argparse.Namespace) -> Endpoint:
    """The endpoint `kind` in a process of its own, logging and probed under `folder`, warmed."""
    probe = folder / "probe"
    probe.mkdir(parents=True, exist_ok=True)
    endpoint = Endpoint(kind, folder, env=stall_probe_env(probe, "endpoint", watch=False), probe=probe)
    if args.warm_up_s > 0:
        warm_up(endpoint, warm_rate, args.warm_up_s, folder / "warm-up")
    return endpoint


def measure(name: str, endpoint: Endpoint, load: Load, out: Path) -> dict:
    """One tool at one rate against the endpoint: run it, read its export, summarise."""
    tool = TOOLS[name]()
    out.mkdir(parents=True, exist_ok=True)
    command, env = tool.command(load, out)
    if (waited := endpoint.wait_idle()) > 1.5:
        print(
            f"  {endpoint.kind} busy before {name} @ {load.rate:g} req/s: waited {waited:.1f} s for it to idle",
            flush=True,
        )
    endpoint_before = endpoint.cpu_s()
    run = run_measured(command, child_env(env), out / "client.log", load.duration_s * 4 + 180)
    endpoint_cpu = endpoint.cpu_s() - endpoint_before
    started_ns, ended_ns = int(run.cpu_samples[0][0] * 1e9), int(run.cpu_samples[-1][0] * 1e9)
    collections = [
        event
        for event in (probe_events(endpoint.probe, "endpoint", endpoint.process.pid) if endpoint.probe else [])
        if event["event"] == "gc" and event.get("generation") == 2 and started_ns <= event["t_ns"] <= ended_ns
    ]
    try:
        result, error = tool.read(load, out), "" if run.code == 0 else f"exit {run.code}, see {out / 'client.log'}"
    except (OSError, ValueError, KeyError, IndexError) as exc:
        result, error = None, f"no results ({type(exc).__name__}: {exc}); see {out / 'client.log'}"
    return summarise(name, endpoint.kind, load, result, run, endpoint_cpu, collections, error)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="loadproof vs AIPerf vs GuideLLM on a zero-delay endpoint")
    parser.add_argument("--rates", default="50,100,200", help="comma-separated request rates (req/s)")
    parser.add_argument("--duration-s", type=float, default=10.0, help="seconds of load per tool per rate")
    parser.add_argument(
        "--tools", default="loadproof,aiperf,guidellm", help=f"comma-separated, from {', '.join(TOOLS)}"
    )
    parser.add_argument("--endpoints", default="reference,guidellm-mock", help="reference and/or guidellm-mock")
    parser.add_argument("--concurrency", type=int, default=None, help="cap on in-flight requests, for every tool")
    parser.add_argument(
        "--warm-up-s", type=float, default=WARM_UP_S, help="unmeasured burst per endpoint at the lowest rate (0: none)"
    )
    parser.add_argument(
        "--fresh-endpoint",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="a new endpoint process, warmed, for every tool at every rate (default): a tool that fell far "
        "behind left the shared endpoint busier for the next (loadproof at 800 req/s right after GuideLLM: "
        "lag p99 6.9 ms, 0.5 alone; bench/CHANGELOG.md)",
    )
    parser.add_argument("--json-out", type=Path, default=None, help="write every row as JSON here")
    parser.add_argument("--work-dir", type=Path, default=None, help="keep each tool's exports and logs here")
    parser.add_argument("--report-only", action="store_true", help="print the report of the rows in --json-out")
    args = parser.parse_args(argv)
    rates = [float(rate) for rate in args.rates.split(",")]
    tools = [name.strip() for name in args.tools.split(",")]
    unknown = [name for name in tools if name not in TOOLS]
    if unknown:
        parser.error(f"unknown tool(s) {unknown}: choose from {', '.join(TOOLS)}")
    if args.report_only:
        if args.json_out is None:
            parser.error("--report-only reads the rows of --json-out")
        rows = json.loads(args.json_out.read_text())
        print_table(rows)
        sys.exit(0 if print_summary(rows, list(dict.fromkeys(row["tool"] for row in rows))) else 1)
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="loadproof-peers-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"exports and logs: {work}  (machine: {os.cpu_count()} cores, load average "
        f"{' / '.join(f'{load:.2f}' for load in os.getloadavg())})",
        flush=True,
    )
    rows = []
    for endpoint_kind in args.endpoints.split(","):
        shared = None if args.fresh_endpoint else start_endpoint(endpoint_kind, work / endpoint_kind, min(rates), args)
        try:
            for index, rate in enumerate(rates):
                # tools interleaved per rate, so drifting machine load hits all alike, and the order
                # rotated per rate, so no tool is always the first to meet the endpoint at a new rate
                shift = index % len(tools)
                for name in tools[shift:] + tools[:shift]:
                    out = work / endpoint_kind / f"{name}-{rate:g}"
                    endpoint = shared or start_endpoint(endpoint_kind, out, min(rates), args)
                    try:
                        load = Load(rate, args.duration_s, args.concurrency, endpoint.root_url)
                        rows.append(measure(name, endpoint, load, out))
                    finally:
                        if shared is None:
                            endpoint.stop()
                    row = rows[-1]
                    if args.json_out:  # as it goes: a long run stopped half-way keeps its rows
                        args.json_out.parent.mkdir(parents=True, exist_ok=True)
                        args.json_out.write_text(json.dumps(rows, indent=1))
                    print(
                        f"  done {endpoint_kind} {name} @ {rate:g} req/s: lag p99 {row.get('lag_ms_p99')} ms, "
                        f"errors {row.get('errors')}, cpu {row['client_cpu_s']:.1f} s "
                        f"({row.get('cpu_ms_per_request')} ms per request after start-up)",
                        flush=True,
                    )
        finally:
            if shared is not None:
                shared.stop()
    print()
    print_table(rows)
    passed = print_summary(rows, tools)
    print(f"load average at the end {' / '.join(f'{load:.2f}' for load in os.getloadavg())}")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
