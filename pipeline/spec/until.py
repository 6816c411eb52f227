"""`workload.replay.until`: repeat the production replay until every claimed figure is resolved
(pipeline/analysis/statistics/until_resolved.py), within bounds in runs and minutes.

    workload:
      replay:
        until: resolved                 # the defaults below
        # or: until: {when: resolved, max_runs: 10, max_minutes: 30, spending: obrien_fleming}
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from pipeline.spec.base import Strict

MAX_RUNS = 20  # as workload.replay.repeats: each run is a whole replay


class Until(Strict):
    """Repeat independent replays of the same sample until every claimed figure repeated over the
    runs (latency, throughput, cost at the production load) has a decisive verdict, judged on the
    t-interval across runs with an alpha-spending correction for looking after every run."""

    when: Literal["resolved"] = Field(default="resolved", description="resolved: every claimed figure decisive")
    max_runs: int = Field(
        default=10, ge=2, le=MAX_RUNS, description="the most runs (the looks the spending is planned over)"
    )
    max_minutes: float = Field(default=30.0, gt=0, description="no run starts after this many minutes of replay")
    spending: Literal["obrien_fleming", "pocock"] = Field(
        default="obrien_fleming",
        description="the alpha-spending function: obrien_fleming (strict early, nearly the full α last) or pocock",
    )

    @model_validator(mode="before")
    @classmethod
    def _word(cls, value: Any) -> Any:
        """`until: resolved` is the defaults."""
        return {"when": value} if isinstance(value, str) else value
