"""The one result type of every data-quality check, rule or great-expectations suite."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ParamSpec

P = ParamSpec("P")

SHOWN_CHARS = 300  # a value longer than this is cut in the explanation (the metadata keeps it whole)


@dataclass
class Outcome:
    """Whether the check passed, and what it saw (shown as the Dagster check's metadata)."""

    passed: bool
    metadata: dict = field(default_factory=dict)


def explained(outcome: Outcome, compared: str, remedy: str) -> Outcome:
    """A failed rule check explains itself as a suite does (`metadata["explanation"]`, which the CLI
    prints under the check, the Dagster UI shows and the pack's data_quality row keeps): what it
    compared, the values it saw (its metadata) and what to do. A passed outcome, or one that
    explains itself already, is returned as it is."""
    if outcome.passed or "explanation" in outcome.metadata:
        return outcome
    values = "; ".join(f"{key} = {_shown(value)}" for key, value in outcome.metadata.items())
    outcome.metadata["explanation"] = f"{compared}: {values}; what to do: {remedy}"
    return outcome


def _shown(value: object) -> str:
    text = str(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def explains(compared: str, remedy: str) -> Callable[[Callable[P, Outcome]], Callable[P, Outcome]]:
    """A rule whose failed outcome is `explained` with these words (what it compares, what to do)."""

    def decorate(rule: Callable[P, Outcome]) -> Callable[P, Outcome]:
        @functools.wraps(rule)
        def run(*args: P.args, **kwargs: P.kwargs) -> Outcome:
            return explained(rule(*args, **kwargs), compared, remedy)

        return run

    return decorate
