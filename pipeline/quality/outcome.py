"""The one result type of every data-quality check, rule or great-expectations suite."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Outcome:
    """Whether the check passed, and what it saw (shown as the Dagster check's metadata)."""

    passed: bool
    metadata: dict = field(default_factory=dict)
