"""The one adapter from a data-quality `Outcome` (pipeline.quality) to a Dagster check result, and
`table_check`: the check that reads one pack table and runs a great-expectations suite on it.

Most asset checks have that one shape (read the table the asset wrote, maybe derive columns, bind
the suite's parameters, validate, report), so they are declared with `table_check` and read as a
list of what is checked; checks with logic of their own stay written out beside their assets.
"""

import warnings
from collections.abc import Callable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetsDefinition,
    PreviewWarning,
    asset_check,
)

from assets.support.partitions import REVALIDATION_PARTITIONS, partition_layout
from pipeline.contracts import PACK_FILES, PackFile, Scope
from pipeline.files.layout import PackLayout
from pipeline.quality import expectations
from pipeline.quality.outcome import Outcome
from pipeline.spec import Spec
from resources import PackStorage, SpecResource

# (context, the spec, the folder the check reads) -> the suite's parameters
SuiteParams = Callable[[AssetCheckExecutionContext, Spec, PackLayout], dict]


PARTITIONED_TABLES = frozenset(file.name for file in PACK_FILES if file.scope is Scope.PARTITION)


def tied_check(*, asset: AssetsDefinition | str, **kwargs):
    """Dagster's `asset_check`, tied to the partition it judged: a check on a candidate × version
    asset is partitioned like it, so its evaluation names the partition (the UI's Checks tab showed
    "Partition —" and the other candidate's latest result) and attaches to that partition's
    materialisation. `asset` is an asset, or the name of a table a multi-asset writes."""
    if isinstance(asset, AssetsDefinition):
        partitioned = asset.partitions_def is not None
    else:
        partitioned = asset in PARTITIONED_TABLES
    decorate = asset_check(asset=asset, partitions_def=REVALIDATION_PARTITIONS if partitioned else None, **kwargs)

    def tied(function: Callable) -> AssetChecksDefinition:
        with warnings.catch_warnings():  # a partitioned check is a preview in Dagster 1.13: known, and wanted
            warnings.simplefilter("ignore", PreviewWarning)
            return decorate(function)

    return tied


def shown_metadata(metadata: dict) -> dict:
    """What the UI shows of an outcome: a suite's empty `failed` list is left out, so a passing
    check no longer reads `failed [Show JSON]` in the UI (its `evaluated` and `successful` counts
    say what passed); a failing one keeps the list."""
    return {key: value for key, value in metadata.items() if not (key == "failed" and not value)}


def check_result(outcome: Outcome, severity: AssetCheckSeverity = AssetCheckSeverity.ERROR) -> AssetCheckResult:
    """`severity` WARN for checks whose failure is shown but does not make the figures wrong."""
    return AssetCheckResult(passed=outcome.passed, severity=severity, metadata=shown_metadata(outcome.metadata))


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

    decorate = tied_check(asset=reads.name, name=f"{reads.name}_{what}", description=description, blocking=blocking)
    if callable(params):  # only a check whose parameters come from the spec requires the spec resource

        def with_spec(
            context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
        ) -> AssetCheckResult:
            return run(context, storage, spec)

        return decorate(with_spec)

    def without_spec(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
        return run(context, storage, None)

    return decorate(without_spec)
