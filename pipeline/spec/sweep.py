"""`workload.replay.sweep`: the load levels of a sweep and the bounds of each level.

A sweep replays the plan at several loads, one level after the other, after the replay at the
spec's own load (which is itself a level of the sweep: its figures are the pack's verdicts).
The knob the sweep turns is the replay mode's own:

- trace: `time_scales` (0.5 = the logged traffic twice as fast: load level 2×). The most useful
  sweep for re-validation: the buyer's own arrival pattern, bursts and all, at growth factors;
- rate: `rates_per_s` (the spec's arrival process, seed and ramp at each rate);
- concurrency: `concurrencies` (closed loop at each fixed number of requests in flight).

Instead of a level list, `search` finds the highest load still meeting the SLA (the capacity at
the SLA, pipeline/replay/conditions/capacity_search.py): from the production level it grows the load
geometrically until a level clearly misses the SLA — or, when the production level itself misses,
shrinks it (÷ growth: ½×, ¼×, …) until a level meets it, down to one request at a time — then
bisects between the last level met and the first missed until the bracket is within `precision`.
Its levels are load levels (trace: × logged traffic = 1 / time_scale; rate: requests/s;
concurrency: requests in flight), bounded by `max_levels`, `max_search_s` and each level's own
bounds below.

Each level is bounded by `requests_per_level` (the plan's first N requests) and, in the
open-loop modes, `duration_s_per_level` (the requests scheduled in the level's first D
seconds), and always by the replay's `max_duration_s`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_LEVELS = 12
SWEEP_KNOB = {"trace": "time_scales", "rate": "rates_per_s", "concurrency": "concurrencies"}
SEARCH = "search"


class Search(BaseModel):
    """The capacity search's bounds: how fast it grows, how tight the bracket, how much it may run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    growth: float = Field(
        default=2.0,
        gt=1.0,
        le=10.0,
        description="each growth level is the previous level × growth (below a production level that misses the "
        "SLA: ÷ growth)",
    )
    precision: float = Field(
        default=0.10,
        gt=0.0,
        lt=1.0,
        description="the bracket is closed when first missed / last met <= 1 + 2 × precision (±precision about "
        "its middle); in flight (concurrency), also when the two are adjacent integers",
    )
    max_levels: int = Field(
        default=8, ge=1, le=MAX_LEVELS, description="at most N levels replayed by the search (production excluded)"
    )
    start: float | None = Field(
        default=None,
        gt=0,
        description="the first load level beyond production (× logged traffic, requests/s or requests in "
        "flight); default: the production level × growth (growth only: shrinking starts at production ÷ growth)",
    )
    max_search_s: float | None = Field(
        default=None,
        gt=0,
        description="no further level is started once the search has run this long (per candidate, wall clock)",
    )


class Sweep(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    time_scales: list[float] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_LEVELS,
        description="mode trace: offsets × each time scale (0.5 = twice the logged rate: load level 2×)",
    )
    rates_per_s: list[float] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_LEVELS,
        description="mode rate: mean requests per second of each level",
    )
    concurrencies: list[int] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_LEVELS,
        description="mode concurrency: requests in flight at each level",
    )
    search: Search | None = Field(
        default=None,
        description="instead of a level list: search for the highest load still meeting the SLA (its bounds)",
    )
    requests_per_level: int | None = Field(
        default=None, ge=1, description="each sweep level sends at most the plan's first N requests"
    )
    duration_s_per_level: float | None = Field(
        default=None,
        gt=0,
        description="open-loop modes: each sweep level sends the requests scheduled in its first D seconds",
    )
    warmup_s: float | None = Field(default=None, ge=0, description="per sweep level; default: the replay's warmup_s")
    cooldown_s: float | None = Field(
        default=None, ge=0, description="per sweep level; default: the replay's cooldown_s"
    )
    stop_after_miss: bool = Field(
        default=True,
        description="level lists: skip a candidate's higher levels once a level clearly misses the SLA (the "
        "attainment interval lies wholly below sla.min_attainment, or the error-rate interval wholly above "
        "sla.max_error_rate); a search always stops growing there",
    )

    @model_validator(mode="after")
    def _exactly_one_knob(self) -> Sweep:
        given = [name for name in (*SWEEP_KNOB.values(), SEARCH) if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of time_scales, rates_per_s, concurrencies, search "
                f"(got {', '.join(given) or 'none'})"
            )
        if self.search is not None:
            return self
        values = getattr(self, given[0])
        if any(value <= 0 for value in values):
            raise ValueError(f"{given[0]}: every level must be > 0")
        if len(set(values)) != len(values):
            raise ValueError(f"{given[0]}: levels must be distinct, got {values}")
        if self.concurrencies is not None and self.duration_s_per_level is not None:
            raise ValueError(
                "duration_s_per_level needs a schedule; a closed loop (concurrencies) has none: use requests_per_level"
            )
        return self

    @property
    def knob(self) -> str:
        """The level list given (time_scales, rates_per_s, concurrencies), or `search`."""
        return next(name for name in (*SWEEP_KNOB.values(), SEARCH) if getattr(self, name) is not None)


def check_sweep_mode(sweep: Sweep | None, mode: str) -> Sweep | None:
    """The sweep turns the replay mode's own knob (called by the spec's Replay model); a search
    turns whichever the mode has."""
    if sweep is None:
        return sweep
    if sweep.search is None and sweep.knob != SWEEP_KNOB[mode]:
        raise ValueError(f"{sweep.knob} sweeps another replay mode; with mode {mode} sweep {SWEEP_KNOB[mode]}")
    if sweep.search is not None and mode == "concurrency" and sweep.duration_s_per_level is not None:
        raise ValueError(
            "duration_s_per_level needs a schedule; a closed loop (mode concurrency) has none: use requests_per_level"
        )
    return sweep
