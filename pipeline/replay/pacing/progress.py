"""A live progress bar for a replay: done/planned, rate, in-flight, errors (off when not a terminal)."""

from __future__ import annotations

import sys

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class ReplayProgress:
    def __init__(self, stats, enabled: bool, label: str):
        self.stats = stats
        self.enabled = enabled and sys.stderr.isatty()
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._label = label

    def __enter__(self) -> ReplayProgress:
        if self.enabled:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(
                    "{task.fields[rate]:.1f} req/s · in flight {task.fields[in_flight]} · errors {task.fields[errors]}"
                ),
                TimeElapsedColumn(),
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(self._label, total=self.stats.planned, rate=0.0, in_flight=0, errors=0)
        return self

    def advance(self) -> None:
        if self._progress is None or self._task is None:  # set together on entering
            return
        elapsed = self._progress.tasks[0].elapsed or 1e-9
        self._progress.update(
            self._task,
            completed=self.stats.sent,
            rate=self.stats.sent / elapsed,
            in_flight=self.stats.in_flight,
            errors=self.stats.errors,
        )

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
