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
