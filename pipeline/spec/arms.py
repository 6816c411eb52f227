"""`workload.replay.arms`: the vendor's own benchmark and the attribution ladder, bounded.

The arms are replays like the sweep's levels, so their bounds live under `workload.replay` beside
the sweep's (the claim block stays what the vendor published: its figures and conditions; what we
run to check them, and for how long, is ours). Every arm is a closed loop at the claim's
concurrency, except the ladder's arrival-process step (an open loop at the same mean load), and
sends at most `requests` requests within `max_duration_s` (the engine's own bound: a request still
in flight when it runs out is cut, and one not yet sent is recorded `not_sent`).

A closed loop's figures come from its steady window (pipeline/analysis/arms.py): the first
`concurrency` sends (the simultaneous first wave) and the drain after the last send are left out,
so `requests` must exceed the claim's concurrency for an arm to have figures at all; a handful of
waves gives usable intervals.
"""

from __future__ import annotations

from pydantic import Field

from pipeline.spec.base import Strict


class Arms(Strict):
    requests: int = Field(
        default=256,
        ge=2,
        description="requests per arm (and per ladder step); the first `concurrency` (the first wave) are warm-up",
    )
    max_duration_s: float = Field(default=120.0, gt=0, description="hard bound on each arm's replay")
    ladder: bool = Field(
        default=True,
        description="also walk from the vendor's conditions to the buyer's load one axis at a time (prompt "
        "lengths, output lengths, request structure, arrival process), one bounded arm per step",
    )
