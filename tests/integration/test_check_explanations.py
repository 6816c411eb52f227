"""A failed check's explanation travels through Dagster: the check's metadata carries it (the
UI shows it) and the pack's `data_quality` row, read back from the run's event log as the
evidence pack reads it, holds its lines (issue 16, item 7). A real Dagster run, a real suite."""

import pandas as pd
from dagster import (
    AssetCheckSeverity,
    AssetExecutionContext,
    DagsterInstance,
    asset,
    asset_check,
    materialize,
)

from assets.support.checks import check_result
from assets.support.run_records import check_results_of_run
from pipeline.pack.document import CheckResult
from pipeline.quality import expectations as ex
from pipeline.quality import rules

SEEN: dict = {}


def table() -> pd.DataFrame:
    return pd.DataFrame(
        {"candidate": ["c"] * 4, "request_id": ["a", "b", "c", "d"], "status": ["ok", "boom", "ok", "?"]}
    )


@asset
def timings() -> None:
    return None


@asset_check(asset=timings, blocking=False)
def timings_statuses():
    def suite(gx, params):
        return [gx.expectations.ExpectColumnValuesToBeInSet(column="status", value_set=["ok", "error"])]

    return check_result(ex.validate(suite, table(), name="timings"), AssetCheckSeverity.WARN)


@asset_check(asset=timings, blocking=True)
def timings_reject_rate():
    """A rule check, not a suite: it explains itself the same way."""
    return check_result(rules.reject_rate_within_budget(90, 10, 0.05))


@asset
def pack(context: AssetExecutionContext) -> None:
    """Reads the checks of the run that checked the timings (in the project, the partition's
    run, or the run that planned), as the evidence pack does."""
    SEEN["data_quality"] = check_results_of_run(context, SEEN["checked_run"])


def test_a_failed_check_explains_itself_in_its_metadata_and_in_the_pack():
    with DagsterInstance.ephemeral() as instance:
        result = materialize([timings, timings_statuses], instance=instance)
        assert result.success  # a WARN check does not stop the run: a pack is still written
        SEEN["checked_run"] = result.run_id
        assert materialize([pack], instance=instance).success
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed
    explanation = evaluation.metadata["explanation"].value
    assert explanation.startswith("status is one of ['ok', 'error']: 2 of 4 rows fail")
    assert "request_id=b" in explanation and "request_id=d" in explanation and "What to do:" in explanation
    (row,) = [r for r in SEEN["data_quality"] if r["check"] == "timings_statuses"]
    assert row["explanation"] == explanation.splitlines()
    assert CheckResult.model_validate(row).explanation == row["explanation"]


def test_a_failed_rule_check_explains_itself_too(capsys):
    from pipeline.cli_output import print_check_explanations

    with DagsterInstance.ephemeral() as instance:
        result = materialize([timings, timings_reject_rate], instance=instance, raise_on_error=False)
        SEEN["checked_run"] = result.run_id
        assert materialize([pack], instance=instance).success
    (evaluation,) = result.get_asset_check_evaluations()
    assert not evaluation.passed
    explanation = evaluation.metadata["explanation"].value
    assert "reject_rate = 0.1" in explanation and "; what to do: read data/quarantine.parquet" in explanation
    print_check_explanations([evaluation])  # what the CLI prints under the failed check
    printed = capsys.readouterr().out
    assert "timings_reject_rate" in printed and "reject_rate = 0.1" in printed
    (row,) = [r for r in SEEN["data_quality"] if r["check"] == "timings_reject_rate"]
    assert row["explanation"] == [explanation]
