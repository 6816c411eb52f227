"""loadproof's replay against AIPerf and GuideLLM, same zero-delay endpoint, same rate and cap.

Set-up once (separate virtualenvs under bench/.venvs/, git-ignored):
    bash bench/setup_peers.sh
Full benchmark (on a quiet machine; about 15 minutes):
    .venv/bin/python bench/peers.py --rates 50,100,200,400,800,1200 --duration-s 20 \
        --tools loadproof,aiperf,guidellm --endpoints reference,guidellm-mock --json-out out/peers.json
Short smoke run:
    .venv/bin/python bench/peers.py --rates 50,200 --duration-s 4

Per endpoint, rate and tool it prints: schedule-lag p99 (or the peer's nearest figure, see
bench/README.md), errors, sends per second achieved, client CPU seconds and peak RSS of the
tool's whole process tree (startup included), endpoint CPU seconds during the run, and
TTFT/E2E p50/p95/p99. Then per tool the highest sustained rate (lag p99 <= 5 ms, no client-side
errors, at least 90 % of the planned requests sent) and, at the highest rate that every tool
sustains, how far each peer's percentiles are from loadproof's.
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_tools import REPO_ROOT, TOOLS, Load, ToolResult, child_env, endpoint_command  # noqa: E402

SUSTAINED_LAG_MS = 5.0
SAMPLE_EVERY_S = 0.2
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


def run_measured(command: list[str], env: dict, log_path: Path, timeout_s: float) -> tuple[int, float, int, float]:
    """Run a client to its end; (exit code, CPU seconds, peak tree RSS bytes, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    cpu_seen: dict[int, float] = {}
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
            if time.monotonic() - started > timeout_s:
                os.killpg(process.pid, signal.SIGKILL)
            time.sleep(SAMPLE_EVERY_S)
        code = process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, max(reaped, sum(cpu_seen.values())), peak_rss, time.monotonic() - started


# --- the endpoint ------------------------------------------------------------------------------


class Endpoint:
    def __init__(self, kind: str, log_dir: Path):
        self.kind = kind
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.root_url = f"http://127.0.0.1:{self.port}"
        self._log = (log_dir / f"endpoint-{kind}.log").open("wb")
        self.process = subprocess.Popen(
            endpoint_command(kind, self.port),
            cwd=REPO_ROOT,
            env=child_env({"HF_HUB_OFFLINE": "1"}),
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
    code: int,
    cpu_s: float,
    rss: int,
    wall_s: float,
    endpoint_cpu_s: float,
    error: str = "",
) -> dict:
    row = {
        "endpoint": endpoint,
        "tool": tool,
        "rate": load.rate,
        "duration_s": load.duration_s,
        "exit_code": code,
        "client_cpu_s": round(cpu_s, 2),
        "peak_rss_mb": round(rss / 2**20, 1),
        "wall_s": round(wall_s, 1),
        "endpoint_cpu_s": round(endpoint_cpu_s, 2),
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
    for name, values in (("lag_ms", result.lag_ms), ("ttft_ms", result.ttft_ms), ("e2e_ms", result.e2e_ms)):
        for p in (50, 95, 99):
            value = percentile(values, p)
            row[f"{name}_p{p}"] = round(value, 3) if value is not None else None
    row["sustained"] = (
        code == 0
        and result.errors == 0
        and row["lag_ms_p99"] is not None
        and row["lag_ms_p99"] <= SUSTAINED_LAG_MS
        and result.requests >= 0.9 * planned
    )
    return row


def _fmt(value, width: int, digits: int = 2) -> str:
    """Right-aligned in `width`, always at least one space before it (large values lose decimals)."""
    if value is None:
        text = "—"
    elif isinstance(value, float):
        text = f"{value:.{digits if abs(value) < 100 else 0}f}"
    else:
        text = str(value)
    return " " + text.rjust(width - 1)


def print_table(rows: list[dict]) -> None:
    header = (
        f"{'endpoint':<14}{'tool':<16}{'rate':>6}{'sent':>6}{'err':>5}{'sent/s':>8}{'lag p99':>9}{'ok':>4}"
        f"{'cpu s':>7}{'rss MB':>8}{'ep cpu':>7}{'ttft p50':>9}{'p95':>7}{'p99':>7}{'e2e p50':>9}{'p95':>7}{'p99':>7}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['endpoint']:<14}{row['tool']:<16}{_fmt(row['rate'], 6, 0)}{_fmt(row.get('requests'), 6)}"
            f"{_fmt(row.get('errors'), 5)}{_fmt(row.get('sends_per_s'), 8, 1)}{_fmt(row.get('lag_ms_p99'), 9)}"
            f"{'yes' if row['sustained'] else 'no':>4}{_fmt(row['client_cpu_s'], 7, 1)}{_fmt(row['peak_rss_mb'], 8, 0)}"
            f"{_fmt(row['endpoint_cpu_s'], 7, 1)}{_fmt(row.get('ttft_ms_p50'), 9)}{_fmt(row.get('ttft_ms_p95'), 7)}"
            f"{_fmt(row.get('ttft_ms_p99'), 7)}{_fmt(row.get('e2e_ms_p50'), 9)}{_fmt(row.get('e2e_ms_p95'), 7)}"
            f"{_fmt(row.get('e2e_ms_p99'), 7)}{('  ' + row['failure']) if row['failure'] else ''}"
        )


def print_summary(rows: list[dict], tools: list[str]) -> None:
    print("\nschedule lag read as:")
    for tool in tools:
        kinds = {row.get("lag_kind") for row in rows if row["tool"] == tool and row.get("lag_kind")}
        notes = [row["note"] for row in rows if row["tool"] == tool and row.get("note")]
        print(f"  {tool:<16}{'; '.join(sorted(kinds))}{('  [' + notes[-1] + ']') if notes else ''}")
    for endpoint in dict.fromkeys(row["endpoint"] for row in rows):
        mine = [row for row in rows if row["endpoint"] == endpoint]
        best = {
            tool: max((row["rate"] for row in mine if row["tool"] == tool and row["sustained"]), default=None)
            for tool in tools
        }
        print(f"\n[{endpoint}] highest sustained rate (lag p99 <= {SUSTAINED_LAG_MS:g} ms, no errors), req/s:")
        for tool in tools:
            print(f"  {tool:<16}{_fmt(best[tool], 8, 0)}")
        lp = best.get("loadproof")
        for peer, goal in (("aiperf", 2.0), ("guidellm", 3.0)):
            if peer in best and lp:
                if best[peer]:
                    ratio = lp / best[peer]
                    shown = f"{ratio:.1f}x (goal >= {goal:g}x: {'met' if ratio >= goal else 'NOT met'})"
                else:
                    shown = f"{peer} sustained none of the rates tried (goal >= {goal:g}x: met, ratio unbounded)"
                print(f"  loadproof vs {peer}: {shown}; the highest rate tried bounds loadproof's own figure")
        common = [
            rate
            for rate in dict.fromkeys(row["rate"] for row in mine)
            if all(any(r["rate"] == rate and r["tool"] == t and r["sustained"] for r in mine) for t in tools)
        ]
        if "loadproof" in tools and len(tools) > 1 and common:
            rate = max(common)
            at = {row["tool"]: row for row in mine if row["rate"] == rate}
            print(f"  percentiles at {rate:g} req/s (all sustain), peer vs loadproof:")
            for tool in tools:
                if tool == "loadproof":
                    continue
                diffs = []
                for metric in ("ttft_ms", "e2e_ms"):
                    for p in (50, 95, 99):
                        mine_v, theirs = at["loadproof"].get(f"{metric}_p{p}"), at[tool].get(f"{metric}_p{p}")
                        if mine_v and theirs is not None:
                            diffs.append(
                                f"{metric[:-3]} p{p} {theirs:.2f} vs {mine_v:.2f} ({(theirs - mine_v) / mine_v:+.0%})"
                            )
                print(f"    {tool}: " + "; ".join(diffs))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="loadproof vs AIPerf vs GuideLLM on a zero-delay endpoint")
    parser.add_argument("--rates", default="50,100,200", help="comma-separated request rates (req/s)")
    parser.add_argument("--duration-s", type=float, default=10.0, help="seconds of load per tool per rate")
    parser.add_argument(
        "--tools", default="loadproof,aiperf,guidellm", help=f"comma-separated, from {', '.join(TOOLS)}"
    )
    parser.add_argument("--endpoints", default="reference,guidellm-mock", help="reference and/or guidellm-mock")
    parser.add_argument("--concurrency", type=int, default=None, help="cap on in-flight requests, for every tool")
    parser.add_argument("--json-out", type=Path, default=None, help="write every row as JSON here")
    parser.add_argument("--work-dir", type=Path, default=None, help="keep each tool's exports and logs here")
    args = parser.parse_args(argv)
    rates = [float(rate) for rate in args.rates.split(",")]
    tools = [name.strip() for name in args.tools.split(",")]
    unknown = [name for name in tools if name not in TOOLS]
    if unknown:
        parser.error(f"unknown tool(s) {unknown}: choose from {', '.join(TOOLS)}")
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="loadproof-peers-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"exports and logs: {work}  (machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f})",
        flush=True,
    )
    rows = []
    for endpoint_kind in args.endpoints.split(","):
        endpoint = Endpoint(endpoint_kind, work)
        try:
            for rate in rates:  # tools interleaved per rate, so drifting machine load hits all alike
                for name in tools:
                    tool = TOOLS[name]()
                    load = Load(rate, args.duration_s, args.concurrency, endpoint.root_url)
                    out = work / endpoint_kind / f"{name}-{rate:g}"
                    out.mkdir(parents=True, exist_ok=True)
                    command, env = tool.command(load, out)
                    endpoint_before = endpoint.cpu_s()
                    code, cpu_s, rss, wall_s = run_measured(
                        command, child_env(env), out / "client.log", args.duration_s * 4 + 180
                    )
                    endpoint_cpu = endpoint.cpu_s() - endpoint_before
                    try:
                        result, error = (
                            tool.read(load, out),
                            "" if code == 0 else f"exit {code}, see {out / 'client.log'}",
                        )
                    except (OSError, ValueError, KeyError, IndexError) as exc:
                        result, error = None, f"no results ({type(exc).__name__}: {exc}); see {out / 'client.log'}"
                    rows.append(
                        summarise(name, endpoint_kind, load, result, code, cpu_s, rss, wall_s, endpoint_cpu, error)
                    )
                    print(
                        f"  done {endpoint_kind} {name} @ {rate:g} req/s: lag p99 {rows[-1].get('lag_ms_p99')} ms, "
                        f"errors {rows[-1].get('errors')}, cpu {cpu_s:.1f} s",
                        flush=True,
                    )
        finally:
            endpoint.stop()
    print()
    print_table(rows)
    print_summary(rows, tools)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
