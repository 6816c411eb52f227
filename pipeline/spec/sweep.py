"""`workload.replay.sweep`: the load levels of a sweep and the bounds of each level.

A sweep replays the plan at several loads, one level after the other, after the replay at the
spec's own load (which is itself a level of the sweep: its figures are the pack's verdicts).
The knob the sweep turns is the replay mode's own:

- trace: `time_scales` (0.5 = the logged traffic twice as fast: load level 2×). The most useful
  sweep for re-validation: the buyer's own arrival pattern, bursts and all, at growth factors;
- rate: `rates_per_s` (the spec's arrival process, seed and ramp at each rate);
- concurrency: `concurrencies` (closed loop at each fixed number of requests in flight).

Each level is bounded by `requests_per_level` (the plan's first N requests) and, in the
open-loop modes, `duration_s_per_level` (the requests scheduled in the level's first D
seconds), and always by the replay's `max_duration_s`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_LEVELS = 12
SWEEP_KNOB = {"trace": "time_scales", "rate": "rates_per_s", "concurrency": "concurrencies"}


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
        description="skip a candidate's higher levels once a level clearly misses the SLA (the attainment "
        "interval lies wholly below sla.min_attainment, or the error-rate interval wholly above sla.max_error_rate)",
    )

    @model_validator(mode="after")
    def _exactly_one_knob(self) -> Sweep:
        given = [name for name in SWEEP_KNOB.values() if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of time_scales, rates_per_s, concurrencies (got {', '.join(given) or 'none'})"
            )
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
        return next(name for name in SWEEP_KNOB.values() if getattr(self, name) is not None)


def check_sweep_mode(sweep: Sweep | None, mode: str) -> Sweep | None:
    """The sweep turns the replay mode's own knob (called by the spec's Replay model)."""
    if sweep is not None and sweep.knob != SWEEP_KNOB[mode]:
        raise ValueError(f"{sweep.knob} sweeps another replay mode; with mode {mode} sweep {SWEEP_KNOB[mode]}")
    return sweep
