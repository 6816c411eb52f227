"""What each exit status of `loadproof` means, and what a signal does to each command: the table the
docs' reference page (`docs/reference/exit-statuses.md`) is generated from. A leaf: standard library
only. `tests/unit/test_exit_statuses_table.py` holds every `typer.Exit(N)` of the CLI to this table,
`tests/integration/test_exit_statuses.py` the commands to status 2 on bad input and
`tests/integration/test_signal_statuses.py` the signal rows outside a run."""

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
        "a run that failed once started: a Dagster run failed (a blocking check, a step's error, or the run "
        "interrupted by a signal), or a candidate kept failing its fingerprint probes after the retries; or "
        "`verify` / `sign` found a difference in the pack (each problem named by its path)",
    ),
    ExitStatus(
        str(BAD_INPUT),
        "bad input, found before anything runs: one line on stderr naming the file, line and field (or the "
        "option) with a hint, and no folder left behind (no pack folder, no `.private/` copy)",
    ),
    ExitStatus(
        "128 + N",
        "stopped by signal N outside a Dagster run (130 for SIGINT, 143 for SIGTERM); what each command does: below",
    ),
)

SIGNALS = (
    SignalCase(
        "`run`, `demo`, `demo-real` while their Dagster runs execute",
        "the run is interrupted and marked failed in the instance; no pack is written: exit 1",
        "the same: exit 1",
    ),
    SignalCase(
        "`serve-reference`",
        "a clean stop (the requests in flight get 3 s to finish): exit 0",
        "ends at once: killed by the signal (143)",
    ),
    SignalCase(
        "every other command (`init`, `verify`, `sign`, `keygen`, `export`, `anonymize`, `fit-profile`)",
        "130",
        "killed by the signal (143)",
    ),
)
