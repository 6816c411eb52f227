"""What each exit status of `loadproof` means, and what a signal does to each command: the table the
docs' reference page (`docs/reference/exit-statuses.md`) is generated from. A leaf: standard library
only. `tests/unit/test_exit_statuses_table.py` holds every `typer.Exit(N)` of the CLI to this table,
`tests/integration/test_exit_statuses.py` the commands to status 2 on bad input and
`tests/integration/test_signal_statuses.py` the signal rows outside a run, `tests/integration/test_signal_run.py`
(slow) the row of a run (`pipeline/interrupts.py`)."""

from __future__ import annotations

from dataclasses import dataclass

OK = 0
FAILED = 1
BAD_INPUT = 2


@dataclass(frozen=True)
class ExitStatus:
    code: str
    meaning: str


@dataclass(frozen=True)
class SignalCase:
    command: str
    sigint: str
    sigterm: str


EXIT_STATUSES = (
    ExitStatus(str(OK), "done: the pack written, verified, exported, signed, the spec or key pair written, …"),
    ExitStatus(
        str(FAILED),
        "a run that failed once started: a Dagster run failed (a blocking check or a step's error), or a "
        "candidate kept failing its fingerprint probes after the retries; or `verify` / `sign` found a difference "
        "in the pack (each problem named by its path), or the folder is an interrupted run's (`INTERRUPTED.json`)",
    ),
    ExitStatus(
        str(BAD_INPUT),
        "bad input, found before anything runs: one line on stderr naming the file, line and field (or the "
        "option) with a hint, and no folder left behind (no pack folder, no `.private/` copy)",
    ),
    ExitStatus(
        "128 + N",
        "stopped by signal N (130 for SIGINT, 143 for SIGTERM): `run`, `demo` and `demo-real` stop their run and "
        "write `INTERRUPTED.json` in place of a pack; what each command does: below",
    ),
)

SIGNALS = (
    SignalCase(
        "`run`, `demo`, `demo-real` once their checks passed (the Dagster runs, the replays)",
        "the run stops: no new request is sent, those in flight are recorded `cancelled`, every replay's records so "
        "far are flushed to Parquet beside its journal, the reference endpoints and shards stop, the run is marked "
        "failed, and `INTERRUPTED.json` (signal, stage, what was flushed) is written in place of a pack: exit 130. A "
        "second signal, or `$LOADPROOF_STOP_GRACE_S` (10 s) passing first, forces the exit at once",
        "the same: exit 143",
    ),
    SignalCase(
        "`serve-reference`",
        "a clean stop (the requests in flight get 3 s to finish), then exit 130",
        "the same clean stop, then killed by the signal (143)",
    ),
    SignalCase(
        "every other command (`init`, `verify`, `sign`, `keygen`, `export`, `anonymize`, `fit-profile`)",
        "130",
        "killed by the signal (143)",
    ),
)
