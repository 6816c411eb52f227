"""The client roofline (pipeline/replay/client_validity/roofline.py) on its own, as every client calibration runs it:
the doubling ramp against the reference endpoint's zero-delay profile, printed step by step.

    .venv/bin/python bench/client_roofline.py [--events-per-request 16] [--transport aiohttp]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from pipeline.reference import ReferenceServer  # noqa: E402
from pipeline.replay.client_validity.calibration import ECHO_MODEL  # noqa: E402
from pipeline.replay.client_validity.roofline import DEFAULT_ROOFLINE, echo_step_runner, search  # noqa: E402
from pipeline.replay.pacing.engine import ReplaySettings  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events-per-request", type=int, default=16)
    parser.add_argument("--from-rate", type=float, default=None, help="first step's rate (default: 10/s)")
    parser.add_argument("--transport", choices=["aiohttp", "httpx"], default="aiohttp")
    args = parser.parse_args(argv)
    settings = ReplaySettings(mode="rate", transport=args.transport)
    with ReferenceServer("zero") as server:
        runner = echo_step_runner(server.base_url, ECHO_MODEL, settings, 1.0)
        roofline = search(runner, args.events_per_request, DEFAULT_ROOFLINE, args.from_rate)
    for step in roofline["steps"]:
        print(
            f"{step['rate_per_s']:6.0f}/s asked: {step['requests']} requests, {step['errors']} errors, "
            f"lag p99 {step['schedule_lag_ms_p99']} ms, achieved {step['sends_per_s'] or 0:.1f} sends/s and "
            f"{step['events_per_s'] or 0:,.0f} events/s -> {'kept' if step['sustained'] else 'not kept'}"
        )
    print(
        f"roofline ({args.events_per_request} events/request, {roofline['stopped_by']}): "
        f"{roofline['sends_per_s']} sends/s, {roofline['events_per_s']} events/s"
        + (" (a lower bound)" if roofline["lower_bound"] else "")
    )


if __name__ == "__main__":
    main()
