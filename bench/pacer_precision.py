"""How late the replay's pacer wakes, with no HTTP at all: the floor under loadproof's schedule lag.

    .venv/bin/python bench/pacer_precision.py --rate 1000 --seconds 3

For each event loop (asyncio's, uvloop's) and each way of waiting (asyncio.sleep, the timerfd
DeadlinePacer) it waits for `rate * seconds` evenly spaced deadlines and prints how late each
wake-up was (p50/p99/max, ms). On a machine shared with busy processes the tail shows the
scheduler, not the pacer.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.replay.pacing.pacer import DeadlinePacer  # noqa: E402


async def lateness(rate: float, seconds: float, precise: bool) -> list[float]:
    pacer = DeadlinePacer()
    late = []
    try:
        start = time.perf_counter_ns() + 10_000_000
        for index in range(int(rate * seconds)):
            deadline = start + int(index * 1e9 / rate)
            if precise:
                await pacer.sleep_until(deadline)
            else:
                delay = (deadline - time.perf_counter_ns()) / 1e9
                if delay > 0:
                    await asyncio.sleep(delay)
            late.append((time.perf_counter_ns() - deadline) / 1e6)
    finally:
        pacer.close()
    return sorted(late)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    loops = {"asyncio": None}
    try:
        import uvloop

        loops["uvloop"] = uvloop.new_event_loop
    except ImportError:
        pass
    print(f"{'loop':<9}{'wait':<16}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for loop_name, factory in loops.items():
        for precise in (False, True):
            with asyncio.Runner(loop_factory=factory) as runner:
                late = runner.run(lateness(args.rate, args.seconds, precise))
            wait = "DeadlinePacer" if precise else "asyncio.sleep"
            p50, p99, worst = late[len(late) // 2], late[int(0.99 * (len(late) - 1))], late[-1]
            print(f"{loop_name:<9}{wait:<16}{p50:>9.3f}{p99:>9.3f}{worst:>9.3f}")


if __name__ == "__main__":
    main()
