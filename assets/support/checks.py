"""The one adapter from a data-quality `Outcome` (pipeline.quality) to a Dagster check result, and
`table_check`: the check that reads one pack table and runs a great-expectations suite on it.

Most asset checks have that one shape (read the table the asset wrote, maybe derive columns, bind
the suite's parameters, validate, report), so they are declared with `table_check` and read as a
list of what is checked; checks with logic of their own stay written out beside their assets.
"""

from collections.abc import Callable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    asset_check,
)

from assets.support.partitions import partition_layout
from pipeline.contracts import PackFile, Scope
from pipeline.files.layout import PackLayout
from pipeline.quality import expectations
from pipeline.quality.outcome import Outcome
from pipeline.spec import Spec
from resources import PackStorage, SpecResource

# (context, the spec, the folder the check reads) -> the suite's parameters
SuiteParams = Callable[[AssetCheckExecutionContext, Spec, PackLayout], dict]


def check_result(outcome: Outcome, severity: AssetCheckSeverity = AssetCheckSeverity.ERROR) -> AssetCheckResult:
    """`severity` WARN for checks whose failure is shown but does not make the figures wrong."""
    return AssetCheckResult(passed=outcome.passed, severity=severity, metadata=outcome.metadata)


def table_check(
    reads: PackFile,
    what: str,
    suite,
    *,
    description: str,
    blocking: bool = False,
    severity: AssetCheckSeverity = AssetCheckSeverity.ERROR,
    columns: list[str] | None = None,
    frame: Callable[[pa.Table], pd.DataFrame] = pa.Table.to_pandas,
    params: dict | SuiteParams | None = None,
    suite_name: str | None = None,
) -> AssetChecksDefinition:
    """The check `<table>_<what>` on the asset that writes `reads`: the table (its `columns`, or
    all) from the running partition's folder when the file is per partition, else from the top
    folder; `frame` turns the rows into what `suite` validates, with `params` (fixed, or computed
    from the spec and the folder). `suite_name` (default: the table's) names the suite in the
    check's metadata.

    The evidence pack, the tests and the Dagster UI know a check by its name, asset, blocking flag,
    severity and description: a module binds the check to a variable of the check's name."""

    def run(context: AssetCheckExecutionContext, storage: PackStorage, spec: SpecResource | None) -> AssetCheckResult:
        layout = partition_layout(storage, context) if reads.scope is Scope.PARTITION else storage.layout()
        table = pq.read_table(layout.path(reads), columns=columns)
        given = params(context, spec.load().spec, layout) if callable(params) and spec else params
        outcome = expectations.validate(suite, frame(table), given, name=suite_name or reads.name)
        return check_result(outcome, severity)

    decorate = asset_check(asset=reads.name, name=f"{reads.name}_{what}", description=description, blocking=blocking)
    if callable(params):  # only a check whose parameters come from the spec requires the spec resource

        def with_spec(
            context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
        ) -> AssetCheckResult:
            return run(context, storage, spec)

        return decorate(with_spec)

    def without_spec(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
        return run(context, storage, None)

    return decorate(without_spec)
