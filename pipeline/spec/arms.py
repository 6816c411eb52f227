"""`workload.replay.arms`: the vendor's own benchmark and the attribution ladder, bounded.

The arms are replays like the sweep's levels, so their bounds live under `workload.replay` beside
the sweep's (the claim block stays what the vendor published: its figures and conditions; what we
run to check them, and for how long, is ours). Every arm is a closed loop at the claim's
concurrency, except the ladder's arrival-process step (an open loop at the same mean load), and
sends its requests within `max_duration_s` (the engine's own bound: a request still in flight when
it runs out is cut, and one not yet sent is recorded `not_sent`). A closed loop's arms are sized in
waves of the claim's concurrency, not a fixed count: the vendor's arm `1 + waves` waves (the first is
warm-up), each ladder step `1 + ladder_waves`; `requests`, when set, is the count of every arm as before.

A closed loop's figures come from its steady window (pipeline/analysis/judge/arms.py): the first
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
        description="requests per arm (and per ladder step) when set; unset, a closed loop's arms are sized in "
        "waves of the claim's concurrency (`waves`, `ladder_waves`) and an open loop's vendor arm sends this many",
    )
    waves: int = Field(
        default=6,
        ge=1,
        description="closed loop: the vendor's arm sends 1 + waves waves of the claim's concurrency (the first is "
        "warm-up); the claim's own num_requests is the vendor's sample, not ours",
    )
    ladder_waves: int = Field(
        default=2,
        ge=1,
        description="closed loop: each ladder step sends 1 + ladder_waves waves of the claim's concurrency (the "
        "steps attribute the change, they judge no claim: fewer waves than the vendor's arm)",
    )
    max_duration_s: float = Field(default=120.0, gt=0, description="hard bound on each arm's replay")
    ladder: bool = Field(
        default=True,
        description="also walk from the vendor's conditions to the buyer's load one axis at a time (prompt "
        "lengths, output lengths, request structure, arrival process), one bounded arm per step",
    )
