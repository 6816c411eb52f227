"""The replay builder: every replay of the project — the production replay's shards and repeats,
each sweep level, each arm, the prefix-cache warm-up, client calibration and each step of the
client's roofline — is a `ReplayRun` handed to `execute`.

Why one place: each kind of replay used to open its journal, call the engine and read the journal
back in its own words, and the copies drifted apart (which context is entered first, whether the
journal is read back, what the totals are called). A caller now says only *which run* (the
requests, the target, the settings, the run id, where its journal goes and, for shards, the common
start) and what runs beside it (e.g. the server-metrics scrape of a sweep level or an arm); the
journal's rows (`RunOutcome.timings`) are read back only by the callers that use them, so the
production replay's shards, merged by another process, never read their own journal twice.

The replays of one candidate (a partition's production replay, sweep levels and arms) share the
target, the settings, the run id and where journals go: a `RunBuilder` holds those once, and each
kind of replay names its runs (`<candidate>.sweep<i>`, `<candidate>.<arm>`, ...) and asks it for them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from pipeline import interrupts
from pipeline.replay.pacing import stopping
from pipeline.replay.pacing.engine import ReplaySettings, ReplayStats, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest


@dataclass(frozen=True)
class ReplayRun:
    """Which run: what is sent (`requests`), to whom (`target`), how (`settings`), under which run
    id (raw timings' `run_id`) and where its crash-safe journal goes. `start_at`: the shards' common
    start (`shards.StartBarrier`); None starts the run as soon as its client is set up."""

    requests: list[PlannedRequest]
    target: Target
    settings: ReplaySettings
    run_id: str
    journal: Path
    start_at: Callable[[], int] | None = None


@dataclass(frozen=True)
class RunBuilder:
    """What every run against one candidate shares: the target, the replay settings, the run id
    and `journal_for`, where the journal of a run with a given name goes. The production replay,
    the sweep and the arms are each handed one (assets/support/replays.py builds a partition's)."""

    target: Target
    settings: ReplaySettings
    run_id: str
    journal_for: Callable[[str], Path]

    def run(
        self,
        name: str,
        requests: list[PlannedRequest],
        settings: ReplaySettings | None = None,
        start_at: Callable[[], int] | None = None,
    ) -> ReplayRun:
        """The run called `name` (its journal's name): `requests` at `settings` (default: the shared ones)."""
        chosen = self.settings if settings is None else settings
        return ReplayRun(requests, self.target, chosen, self.run_id, self.journal_for(name), start_at)


@dataclass(frozen=True)
class RunOutcome:
    """What one run left: its journal (one raw-timing record per planned request) and its totals."""

    journal: Path
    stats: ReplayStats

    def timings(self) -> pa.Table:
        """The run's raw timings, read back from its journal."""
        return journal_to_table(self.journal)

    def totals(self) -> dict:
        """The run's totals (`ReplayStats`) as a summary's keys."""
        return dataclasses.asdict(self.stats)


def execute(run: ReplayRun, beside: AbstractContextManager | None = None) -> RunOutcome:
    """Send `run` through the engine (`run_replay`) into its journal, inside `beside` (what runs
    beside this one run, e.g. `ScrapesBeside.around(...)`: entered before the journal is opened,
    left after it is closed). A stop request (`pipeline/interrupts.py`) before it starts raises
    `StopRequested`; one during it ends it early (`stopping.py`): its journal flushed to Parquet, then
    `ReplayStopped` — so the sweep's levels, the arms and the capacity search stop between levels."""
    interrupts.raise_if_stopped(f"replay {run.journal.stem}")
    with (
        interrupts.signals_stop_the_replay(),
        beside if beside is not None else nullcontext(),
        Journal(run.journal) as journal,
    ):
        stats = run_replay(run.requests, run.target, run.settings, run.run_id, journal, start_at=run.start_at)
    if interrupts.stop_requested():
        stopping.flush_stopped(run.journal)
    return RunOutcome(run.journal, stats)
