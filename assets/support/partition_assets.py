"""The head of a partitioned asset (candidate × model version) made only from the partition's
folder and the spec, as the analysis tables are: `partition_asset` hands its body the context, the
spec and the partition's `PackLayout` (a partitioned asset that replays is a `replay_asset`,
assets/support/replays.py); `derived_table_asset`, one query over another of the partition's tables."""

from collections.abc import Callable

from dagster import AssetExecutionContext, AssetsDefinition, MaterializeResult, asset

from assets.support.metadata import write_table
from assets.support.partitions import REVALIDATION_PARTITIONS, partition_layout
from pipeline.contracts import PackFile
from pipeline.files.layout import PackLayout
from pipeline.spec import Spec
from resources import PackStorage, SpecResource

PartitionBody = Callable[[AssetExecutionContext, Spec, PackLayout], MaterializeResult]


def partition_asset(
    *, group_name: str, deps: list, description: str, name: str | None = None
) -> Callable[[PartitionBody], AssetsDefinition]:
    """A partitioned asset that reads and writes the partition's folder: the decorated body, named
    as the asset (or `name`), is handed the context, the spec and the partition's layout."""

    def decorate(body: PartitionBody) -> AssetsDefinition:
        @asset(
            name=name or body.__name__,
            partitions_def=REVALIDATION_PARTITIONS,
            group_name=group_name,
            deps=deps,
            description=description,
        )
        def in_partition(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
            return body(context, spec.load().spec, partition_layout(storage, context))

        return in_partition

    return decorate


def derived_table_asset(
    file: PackFile, compute, source: PackFile, *, group: str, deps: list, description: str
) -> AssetsDefinition:
    """A partitioned asset that is one query over another of the partition's tables:
    `compute(source path, spec)` written as `file`."""

    @partition_asset(name=file.name, group_name=group, deps=deps, description=description)
    def derived(context: AssetExecutionContext, spec: Spec, layout: PackLayout) -> MaterializeResult:
        table = compute(layout.path(source), spec)
        return MaterializeResult(metadata=write_table(context, layout, file, table, sql=True, inputs=[source]))

    return derived
