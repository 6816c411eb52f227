"""loadproof's side of bench/peers.py: one open-loop replay at a constant rate, run in its own
process so that its CPU time and memory are measured like the peers' (the whole process tree).

    .venv/bin/python bench/loadproof_client.py --base-url http://127.0.0.1:8100/v1 \
        --model reference-model --rate 100 --duration-s 5 --max-tokens 16 --out /tmp/lp

Writes `raw_timings.jsonl` (the replay journal: ARCHITECTURE.md's raw-timing columns) and
`stats.json` (ReplayStats) under --out.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay  # noqa: E402
from pipeline.replay.recording.journal import Journal  # noqa: E402
from pipeline.replay.recording.records import PlannedRequest  # noqa: E402

PROMPT_WORDS = 32


def constant_rate_plan(rate: float, duration_s: float, max_tokens: int) -> list[PlannedRequest]:
    """Requests every 1/rate seconds for duration_s seconds, each a fixed 32-word prompt."""
    count = max(1, int(rate * duration_s))
    return [
        PlannedRequest(
            request_id=f"bench-{index:07d}",
            scheduled_offset_s=index / rate,
            messages=[{"role": "user", "content": " ".join(f"w{(index + j) % 97}" for j in range(PROMPT_WORDS))}],
            max_tokens=max_tokens,
            prompt_tokens_client=PROMPT_WORDS,
        )
        for index in range(count)
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--duration-s", type=float, required=True)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--max-concurrency", type=int, default=None)
    parser.add_argument("--transport", choices=["aiohttp", "httpx"], default="aiohttp")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    plan = constant_rate_plan(args.rate, args.duration_s, args.max_tokens)
    settings = ReplaySettings(
        mode="rate",
        max_concurrency=args.max_concurrency,
        request_timeout_s=30.0,
        max_duration_s=args.duration_s + 30.0,
        transport=args.transport,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    with Journal(args.out / "raw_timings.jsonl") as journal:
        stats = run_replay(plan, Target("loadproof", args.base_url, args.model), settings, "bench", journal)
    (args.out / "stats.json").write_text(json.dumps(asdict(stats)))


if __name__ == "__main__":
    main()
