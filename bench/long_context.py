"""The replay client on long contexts: client CPU per SSE event and the longest read stall, short
prompts against 32k- and 128k-token prompts, with long streams at 32 concurrent streams.

Python clients are known to collapse on long contexts (vLLM issue 39963: throughput ~10x lower at
50k+ token contexts, from the read path); this bench shows whether loadproof's client does. It
drives the reference endpoint's zero-delay profile (`zero`: no prefill, no decode time, so the
server emits every token as fast as it can and any stall is the client's or the host's), closed
loop at `--concurrency` streams, each request asking for exactly `--output-tokens` tokens
(`min_tokens` + `ignore_eos`).

Per context length it prints: SSE content events received, client process CPU time / events
(the server runs in its own process, so this is the client alone), events/s, the client's TTFT
p50 (carrying the prompt up), the longest gap between consecutive events as the client saw them
(the read stall; also counted only once every stream had its first token, when the server
has no prompt left to read) with the p99 gap, events/s from the first event to the last, and the
server's own pacing for the same streams (its timeline: (end − first token) / (tokens − 1), mean
and max over streams). "No collapse": the long contexts' CPU per event and events/s stay near the
short context's. The server stamps only the first and last token of a stream, so one stall cannot
be split between client and server; the stall once every stream streams excludes the server's
prompt reading, which runs on the event loop that streams the other replies.

    .venv/bin/python bench/long_context.py [--contexts 256,32768,131072] [--output-tokens 4096]
        [--concurrency 32] [--requests 32]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from pipeline.reference import ReferenceServer  # noqa: E402
from pipeline.reference.timeline import read_timeline  # noqa: E402
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay  # noqa: E402
from pipeline.replay.recording.journal import Journal, journal_to_table  # noqa: E402
from pipeline.replay.recording.records import PlannedRequest  # noqa: E402
from pipeline.tokens import count_message_tokens  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def long_prompt(tokens: int, salt: int) -> list[dict]:
    """A chat prompt of about `tokens` tokens (words; the reference tokenizer counts words), distinct
    per request so the endpoint's prefix cache cannot make the long ones cheap."""
    words = " ".join(f"w{salt}x{i % 997}" for i in range(max(1, tokens - 1)))
    return [{"role": "user", "content": words}]


def run_case(context: int, args: argparse.Namespace, folder: Path) -> dict:
    plan = []
    for index in range(args.requests):
        messages = long_prompt(context, index)
        plan.append(
            PlannedRequest(
                f"ctx{context}-{index}",
                None,
                messages,
                args.output_tokens,
                count_message_tokens(messages),
                min_tokens=args.output_tokens,
            )
        )
    timeline_path = folder / f"timeline-{context}.jsonl"
    journal_path = folder / f"journal-{context}.jsonl"
    settings = ReplaySettings(mode="concurrency", concurrency=args.concurrency, request_timeout_s=300.0)
    with ReferenceServer("zero", timeline_path=timeline_path) as server, Journal(journal_path) as journal:
        cpu_before, wall_before = time.process_time(), time.perf_counter()
        stats = run_replay(plan, Target("ref", server.base_url, "reference-model"), settings, "bench", journal)
        cpu_s, wall_s = time.process_time() - cpu_before, time.perf_counter() - wall_before
    rows = [row for row in journal_to_table(journal_path).to_pylist() if row["status"] == "ok"]
    events = sum(row["content_chunks"] for row in rows)
    gaps_ms = [
        (later - earlier) / 1e6
        for row in rows
        for earlier, later in zip(row["chunk_offsets_ns"], row["chunk_offsets_ns"][1:])
    ]
    # gaps that start after every stream's first token: by then the server has read and tokenized
    # every prompt (one round of `concurrency` requests), so a stall there is not a prompt being
    # processed on the server's one event loop while the others wait
    all_streaming_ns = max((row["t_first_token_ns"] for row in rows), default=0)
    steady_gaps_ms = [
        (later - earlier) / 1e6
        for row in rows
        for earlier, later in zip(row["chunk_offsets_ns"], row["chunk_offsets_ns"][1:])
        if row["t_sent_ns"] + earlier >= all_streaming_ns
    ]
    event_times = [row["t_sent_ns"] + offset for row in rows for offset in row["chunk_offsets_ns"]]
    streaming_s = (max(event_times) - min(event_times)) / 1e9 if event_times else 0.0
    server_pacing_ms = [
        (record["end_ns"] - record["first_token_ns"]) / 1e6 / (record["completion_tokens"] - 1)
        for record in read_timeline(timeline_path)
        if record.get("first_token_ns") and record.get("end_ns") and (record.get("completion_tokens") or 0) > 1
    ]
    return {
        "context": context,
        "prompt_tokens": plan[0].prompt_tokens_client,
        "requests": len(plan),
        "errors": stats.errors + stats.unsent,
        "events": events,
        "cpu_us_per_event": cpu_s / events * 1e6 if events else None,
        "events_per_s": events / wall_s,
        "wall_s": wall_s,
        "ttft_ms_p50": pct([row["ttft_ms"] for row in rows], 50) if rows else None,
        "stall_ms_max": max(gaps_ms) if gaps_ms else None,
        "gap_ms_p99": pct(gaps_ms, 99) if gaps_ms else None,
        "steady_stall_ms_max": max(steady_gaps_ms) if steady_gaps_ms else None,
        "streaming_events_per_s": events / streaming_s if streaming_s else None,
        "server_pacing_ms_mean": sum(server_pacing_ms) / len(server_pacing_ms) if server_pacing_ms else None,
        "server_pacing_ms_max": max(server_pacing_ms) if server_pacing_ms else None,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contexts", default="256,32768,131072", help="prompt lengths in tokens, comma-separated")
    parser.add_argument("--output-tokens", type=int, default=4096)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--requests", type=int, default=32, help="requests per context length")
    args = parser.parse_args(argv)
    print(
        f"zero endpoint, {args.concurrency} streams, {args.requests} requests per context, "
        f"{args.output_tokens} tokens per stream"
    )
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for context in (int(c) for c in args.contexts.split(",")):
            result = run_case(context, args, Path(tmp))
            results.append(result)
            print(
                f"context {result['prompt_tokens']:7d} tokens: {result['requests']} requests, "
                f"{result['errors']} errors, "
                f"{result['events']} events in {result['wall_s']:.1f} s ({result['events_per_s']:,.0f} events/s); "
                f"client CPU {result['cpu_us_per_event']:.1f} µs/event; TTFT p50 {result['ttft_ms_p50']:.1f} ms; "
                f"read gap p99 {result['gap_ms_p99']:.2f} ms, longest stall {result['stall_ms_max']:.1f} ms "
                f"({result['steady_stall_ms_max']:.1f} ms once every stream was streaming); "
                f"{result['streaming_events_per_s']:,.0f} events/s first event to last; "
                f"server pacing mean {result['server_pacing_ms_mean']:.3f} ms/token "
                f"(slowest stream {result['server_pacing_ms_max']:.3f})",
                flush=True,
            )
    short = results[0]
    for result in results[1:]:
        print(
            f"{result['prompt_tokens']} vs {short['prompt_tokens']} tokens: CPU per event "
            f"x{result['cpu_us_per_event'] / short['cpu_us_per_event']:.2f}, events/s "
            f"x{result['events_per_s'] / short['events_per_s']:.2f} "
            f"(first event to last x{result['streaming_events_per_s'] / short['streaming_events_per_s']:.2f}), "
            f"longest stall "
            f"x{result['stall_ms_max'] / short['stall_ms_max']:.2f}"
        )


if __name__ == "__main__":
    main()
