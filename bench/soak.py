"""Soak: N requests (default 100,000) against the zero-delay reference endpoint, the replay's RSS
sampled every second; prints start / peak / end RSS and the growth over the second half.

    .venv/bin/python bench/soak.py [--requests 100000] [--rate 400] [--max-tokens 16]

The replay runs in this process (RSS is sampled from a thread); the endpoint is a subprocess.
The journal goes to a temporary folder and is checked for one row per request at the end.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.loadproof_client import constant_rate_plan  # noqa: E402
from pipeline.reference import ReferenceServer  # noqa: E402
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay  # noqa: E402
from pipeline.replay.recording.journal import Journal, journal_to_table  # noqa: E402

SAMPLE_EVERY_S = 1.0


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--rate", type=float, default=400.0)
    parser.add_argument("--max-tokens", type=int, default=16)
    args = parser.parse_args()

    plan = constant_rate_plan(args.rate, args.requests / args.rate, args.max_tokens)
    samples: list[tuple[float, float]] = []
    stop = threading.Event()

    def sample() -> None:
        began = time.monotonic()
        while not stop.is_set():
            samples.append((time.monotonic() - began, rss_mib()))
            stop.wait(SAMPLE_EVERY_S)

    with tempfile.TemporaryDirectory() as work, ReferenceServer("zero") as server:
        journal_path = Path(work) / "soak.jsonl"
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        settings = ReplaySettings(mode="rate", max_duration_s=args.requests / args.rate * 3 + 60)
        with Journal(journal_path) as journal:
            stats = run_replay(plan, Target("soak", server.base_url, "reference-model"), settings, "soak", journal)
        stop.set()
        sampler.join()
        rows = journal_to_table(journal_path).num_rows

    rss = [value for _, value in samples]
    half = len(rss) // 2
    print(
        f"requests planned {len(plan)}, recorded {rows}, sent {stats.sent}, errors {stats.errors}, not sent "
        f"{stats.unsent}"
    )
    print(f"wall {stats.wall_s:.1f} s, {stats.sent / stats.wall_s:.0f} req/s")
    print(
        f"RSS MiB: start {rss[0]:.0f}, peak {max(rss):.0f}, end {rss[-1]:.0f}; growth over the second half "
        f"{rss[-1] - rss[half]:+.1f}"
    )


if __name__ == "__main__":
    main()
