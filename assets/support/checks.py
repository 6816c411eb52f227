"""The one adapter from a data-quality `Outcome` (pipeline.quality) to a Dagster check result."""

from dagster import AssetCheckResult, AssetCheckSeverity

from pipeline.quality.outcome import Outcome


def check_result(outcome: Outcome, severity: AssetCheckSeverity = AssetCheckSeverity.ERROR) -> AssetCheckResult:
    """`severity` WARN for checks whose failure is shown but does not make the figures wrong."""
    return AssetCheckResult(passed=outcome.passed, severity=severity, metadata=outcome.metadata)
