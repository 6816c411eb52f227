"""Where the replay client's CPU per request goes at a constant rate against the reference endpoint
(`zero` profile), after start-up: loadproof's replay against two floors measured the same way.

- `replay`: `run_replay` (the default aiohttp transport, journal and all), CPU from the moment the
  pool is open (just before the first send) to the replay's end, divided by the requests;
- `aiohttp`: bare aiohttp on the same loop (uvloop) and plan: POST, read the body block by block,
  nothing parsed, stamped or written;
- `socket`: a bare asyncio protocol on the same loop: write the request bytes, count the reply's
  reads until the chunked body's end; no HTTP library at all;
- `lean`: what the replay does per request without aiohttp — that protocol with httptools parsing
  the HTTP, the replay's own SSE reading (`aio_request._take_lines`, `ReplyReader`, stamped at
  each socket read), `finish`, `build_record` and a journal line — a sketch of a leaner transport
  (no pool growth, errors or timeouts), to say what one would cost.

Each case runs in a fresh process, the cases interleaved `--repeats` times (so a neighbour's load
falls on all of them alike); printed: each run's CPU ms per request, schedule lag p99 (the replay's
own; the floors pace the same way), and the replay's socket reads per request (distinct arrival
stamps per reply) — with `--max-tokens 1` as well, the split into a cost per request and one per
streamed event.

    .venv/bin/python bench/client_cpu.py --rate 400 --duration-s 5 --max-tokens 1,16 --repeats 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.loadproof_client import constant_rate_plan  # noqa: E402
from pipeline.reference import ReferenceServer  # noqa: E402

CASES = ("replay", "aiohttp", "socket", "lean")
MODEL = "reference-model"


def _replay(base_url: str, rate: float, duration_s: float, max_tokens: int) -> dict:
    from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
    from pipeline.replay.recording.journal import Journal
    from pipeline.replay.transport import aio_request

    plan = constant_rate_plan(rate, duration_s, max_tokens)
    settings = ReplaySettings(mode="rate", request_timeout_s=30.0, max_duration_s=duration_s + 30.0)
    opened_at: list[float] = []
    open_pool = aio_request.open_connections

    async def timed_open(*args, **kwargs):  # start-up ends once the pool is open
        opened = await open_pool(*args, **kwargs)
        opened_at.append(time.process_time())
        return opened

    aio_request.open_connections = timed_open  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as folder:
        journal_path = Path(folder) / "raw_timings.jsonl"
        with Journal(journal_path) as journal:
            run_replay(plan, Target("bench", base_url, MODEL), settings, "client-cpu", journal)
        cpu_s = time.process_time() - opened_at[0]
        rows = [json.loads(line) for line in journal_path.read_text().splitlines()]
    lags = sorted(row["schedule_lag_ms"] for row in rows)
    reads = [len(set(row["chunk_offsets_ns"] or [])) for row in rows if row["status"] == "ok"]
    return {
        "requests": len(rows),
        "errors": sum(row["status"] != "ok" for row in rows),
        "cpu_ms_per_request": cpu_s * 1e3 / len(rows),
        "lag_p99_ms": lags[int(0.99 * (len(lags) - 1))],
        "token_reads_per_request": statistics.mean(reads) if reads else None,
    }


def _request_body(max_tokens: int) -> bytes:
    messages = constant_rate_plan(1, 1, max_tokens)[0].messages
    body = {"model": MODEL, "messages": messages, "max_tokens": max_tokens, "stream": True}
    return json.dumps({**body, "stream_options": {"include_usage": True}}).encode()


async def _paced(rate: float, duration_s: float, one) -> dict:
    """`one()` started every 1/rate s for duration_s; CPU per request and schedule lag p99."""
    count = max(1, int(rate * duration_s))
    lags, tasks = [], []
    started_cpu, start = time.process_time(), time.perf_counter() + 0.01
    for index in range(count):
        wait = start + index / rate - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        lags.append((time.perf_counter() - start - index / rate) * 1e3)
        tasks.append(asyncio.create_task(one()))
    await asyncio.gather(*tasks)
    lags.sort()
    cpu_ms = (time.process_time() - started_cpu) * 1e3 / count
    return {"requests": count, "errors": 0, "cpu_ms_per_request": cpu_ms, "lag_p99_ms": lags[int(0.99 * (count - 1))]}


async def _aiohttp(base_url: str, rate: float, duration_s: float, max_tokens: int) -> dict:
    import aiohttp

    body, url = _request_body(max_tokens), f"{base_url}/chat/completions"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one() -> None:
            async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as response:
                async for _ in response.content.iter_any():
                    pass

        await asyncio.gather(*(one() for _ in range(min(int(rate), 512))))  # the pool, as the replay opens it
        return await _paced(rate, duration_s, one)


class _Exchange(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.done: asyncio.Future | None = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if data.endswith(b"0\r\n\r\n") and self.done is not None:  # the chunked body's last chunk
            self.done.set_result(None)


async def _socket(base_url: str, rate: float, duration_s: float, max_tokens: int) -> dict:
    body, loop = _request_body(max_tokens), asyncio.get_running_loop()
    host, port = base_url.split("//")[1].split("/")[0].split(":")
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    request = f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body
    idle = [(await loop.create_connection(_Exchange, host, int(port)))[1] for _ in range(min(int(rate), 512))]

    async def one() -> None:
        exchange = idle.pop() if idle else (await loop.create_connection(_Exchange, host, int(port)))[1]
        exchange.done = loop.create_future()
        assert exchange.transport is not None
        exchange.transport.write(request)
        await exchange.done
        idle.append(exchange)

    return await _paced(rate, duration_s, one)


class _LeanExchange(asyncio.Protocol):
    """One keep-alive connection: httptools parses the reply, the replay's reader reads its events."""

    def __init__(self) -> None:
        import httptools

        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.done: asyncio.Future | None = None
        self.reader = None
        self.data: list[str] = []
        self.pending = b""
        self.received_ns = 0

    def connection_made(self, transport) -> None:  # type: ignore[override]
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.received_ns = time.perf_counter_ns()  # every event this read completes: stamped here
        self.parser.feed_data(data)

    def on_body(self, body: bytes) -> None:
        from pipeline.replay.transport.aio_request import _take_lines

        block = self.pending + body if self.pending else body
        end = block.rfind(b"\n")
        self.pending = block[end + 1 :]
        if end >= 0:
            self.data = _take_lines(block[:end].decode("utf-8").split("\n"), self.data, self.reader, self.received_ns)

    def on_message_complete(self) -> None:
        assert self.reader is not None and self.done is not None
        self.reader.end()
        self.done.set_result(None)


async def _lean(base_url: str, rate: float, duration_s: float, max_tokens: int) -> dict:
    from datetime import UTC, datetime

    from pipeline.replay.reading.reply_reading import finish
    from pipeline.replay.recording.journal import Journal
    from pipeline.replay.recording.records import RequestOutcome, build_record
    from pipeline.replay.transport.api_kinds import stream_reader

    body, loop = _request_body(max_tokens), asyncio.get_running_loop()
    body_fields = json.loads(body)
    host, port = base_url.split("//")[1].split("/")[0].split(":")
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    idle = [(await loop.create_connection(_LeanExchange, host, int(port)))[1] for _ in range(min(int(rate), 512))]
    with tempfile.TemporaryDirectory() as folder, Journal(Path(folder) / "raw_timings.jsonl") as journal:

        async def one() -> None:
            exchange = idle.pop() if idle else (await loop.create_connection(_LeanExchange, host, int(port)))[1]
            outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime.now(UTC), t_end_ns=0)
            exchange.reader, exchange.data, exchange.pending = stream_reader("chat", outcome), [], b""
            exchange.done = loop.create_future()
            request = f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body
            outcome.t_send_call_ns = outcome.t_sent_ns = time.perf_counter_ns()
            assert exchange.transport is not None
            exchange.transport.write(request)
            await exchange.done
            idle.append(exchange)
            finish(outcome, body_fields, exchange.reader)
            record = build_record(
                run_id="lean",
                candidate="bench",
                request_id="r",
                scheduled_offset_s=None,
                t_scheduled_ns=outcome.t_sent_ns,
                prompt_tokens_client=32,
                max_tokens=max_tokens,
                outcome=outcome,
            )
            journal.append(record)
            tokens.append(len(outcome.chunk_times_ns) if record["status"] == "ok" else -1)

        tokens: list[int] = []
        result = await _paced(rate, duration_s, one)
        return {**result, "errors": sum(count != max_tokens for count in tokens)}  # a reply short of its tokens


def run_case(case: str, base_url: str, rate: float, duration_s: float, max_tokens: int) -> dict:
    """One case in this process (the replay runs its own loop; the floors run on uvloop)."""
    if case == "replay":
        return _replay(base_url, rate, duration_s, max_tokens)
    import uvloop

    floor = {"aiohttp": _aiohttp, "socket": _socket, "lean": _lean}[case]
    return uvloop.run(floor(base_url, rate, duration_s, max_tokens))


def _child(case: str, base_url: str, max_tokens: int, rate: float, duration_s: float) -> dict:
    """One case in a fresh process: its result."""
    command = [sys.executable, __file__, "--rate", str(rate), "--duration-s", str(duration_s)]
    child = subprocess.run([*command, "--one", f"{case},{base_url},{max_tokens}"], capture_output=True, text=True)
    if child.returncode != 0:
        raise SystemExit(f"{case} failed:\n{child.stderr[-2000:]}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=400.0)
    parser.add_argument("--duration-s", type=float, default=5.0)
    parser.add_argument("--max-tokens", default="16", help="comma-separated output lengths")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--warm-up-s", type=float, default=2.0, help="an unmeasured aiohttp burst first")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child: case,base_url,max_tokens
    args = parser.parse_args(argv)
    if args.one:
        case, base_url, max_tokens = args.one.split(",")
        print(json.dumps(run_case(case, base_url, args.rate, args.duration_s, int(max_tokens))))
        return
    with ReferenceServer("zero") as server:
        if args.warm_up_s > 0:  # the endpoint's own first requests (and collections) out of the figures
            _child("aiohttp", server.base_url, 16, args.rate, args.warm_up_s)
        for max_tokens in [int(value) for value in args.max_tokens.split(",")]:
            for repeat in range(args.repeats):
                for case in args.cases.split(","):
                    result = _child(case, server.base_url, max_tokens, args.rate, args.duration_s)
                    load = os.getloadavg()[0]
                    reads = result.get("token_reads_per_request")
                    print(
                        f"max_tokens {max_tokens:3d}  run {repeat + 1}  {case:8s}  "
                        f"{result['cpu_ms_per_request']:.3f} ms/request  lag p99 {result['lag_p99_ms']:.2f} ms  "
                        f"errors {result['errors']}"
                        + (f"  token reads/request {reads:.1f}" if reads is not None else "")
                        + f"  (load average {load:.2f})",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
