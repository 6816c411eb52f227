"""The one place a partition's replay is put together: every replay of a candidate × model version
(the production replay's shards and repeats, the sweep's levels, the arms) sends the plan with its
text (the private copy under `privacy.text` hash and drop) to the partition's candidate, with the
spec's replay settings, journals where the privacy rule puts them, and writes its rows the same way
(the reply text withheld from the pack). What the runs share is the partition's `RunBuilder`
(pipeline/replay/pacing/runs.py, `runs`), and the server's own view beside them (`scrapes`,
`beside_production_replay`). The assets only say which run it is and where it goes: a partitioned
asset that replays is a `replay_asset`, whose body is handed the partition's `PartitionReplay`."""

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from functools import cached_property
from pathlib import Path

import pyarrow as pa
from dagster import AssetExecutionContext, AssetsDefinition, MaterializeResult, asset

from assets.support.metadata import input_files, table_metadata
from assets.support.partitions import REVALIDATION_PARTITIONS, partition_candidate, partition_layout
from assets.support.privacy import journal_layout, planned_requests_with_text, text_layout, write_raw_timings
from pipeline.contracts import PackFile
from pipeline.plan.warm_prefixes import beside_production_replay
from pipeline.replay.endpoint.server_metrics import ScrapesBeside
from pipeline.replay.pacing.engine import ReplaySettings
from pipeline.replay.pacing.runs import RunBuilder
from pipeline.replay.recording.records import PlannedRequest
from resources import EndpointResource, PackStorage, SpecResource


class PartitionReplay:
    """A replay of the partition in `context`: its spec, folder, candidate, target and settings;
    the plan (read once, when first asked for) and a journal per named run."""

    def __init__(
        self, context, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource, progress: bool = True
    ):
        self.context, self.storage, self.endpoint = context, storage, endpoint
        self.loaded = spec.load()
        self.spec = self.loaded.spec
        self.replay = self.spec.workload.replay
        self.layout = partition_layout(storage, context)
        self.candidate = partition_candidate(context, self.spec)
        self.target = endpoint.target(self.candidate)
        self.settings = ReplaySettings.from_spec(self.replay, self.spec.privacy.text, progress=progress)
        self.run_id: str = context.run_id

    @cached_property
    def plan(self) -> list[PlannedRequest]:
        """The requests to send, with their text (privacy.text: the private copy)."""
        return planned_requests_with_text(self.storage, self.spec)

    @cached_property
    def _journals(self):
        return journal_layout(self.storage, self.spec, self.layout)  # private with mixed accuracy's replies

    def journal(self, name: str) -> Path:
        """The crash-safe journal of one named run (e.g. `<candidate>.sweep3`)."""
        return self._journals.journal(self.run_id, name)

    @property
    def runs(self) -> RunBuilder:
        """Every run of this partition: its target, settings and run id, each journalled by name."""
        return RunBuilder(self.target, self.settings, self.run_id, self.journal)

    def scrapes(self, scope_column: str) -> ScrapesBeside:
        """The server's own view beside each run of one kind (`load_level`: sweep levels, `arm`: arms)."""
        return ScrapesBeside(self.target, self.replay, self.run_id, scope_column)

    def beside_production_replay(self, shard_index: int, warn: Callable[[str], None]) -> AbstractContextManager:
        """What a shard's production replay runs inside: on shard 0, the prefix-cache warm-up (its
        rows with their text, privacy.text), then the server's own view."""
        warm_rows = text_layout(self.storage, self.spec)
        return beside_production_replay(
            self.target, self.spec.workload, shard_index, self.layout, self.run_id, warn, warm_rows=warm_rows
        )

    def write(self, file: PackFile, timings: pa.Table, inputs: Sequence[PackFile] = ()) -> dict:
        """The rows into the pack as `file` (the reply text withheld, and kept privately where mixed
        accuracy needs it); returns the materialisation metadata, with the sha256 of the partition's
        `inputs` the run read (the plan: the pack's copy)."""
        meta = input_files(self.layout, inputs)
        path = write_raw_timings(self.storage, self.spec, self.layout, file, timings)
        return meta | table_metadata(timings, path, self.run_id)


def replay_asset(
    *, group_name: str, deps: list, description: str
) -> Callable[[Callable[[AssetExecutionContext, PartitionReplay], MaterializeResult]], AssetsDefinition]:
    """A partitioned asset (candidate × model version) that sends requests to the partition's
    candidate (a replay; the fingerprint's probes): the decorated body, named as the asset, is
    handed the context and the partition's `PartitionReplay`, and says only which runs it sends
    and where their rows go."""

    def decorate(body: Callable[[AssetExecutionContext, PartitionReplay], MaterializeResult]) -> AssetsDefinition:
        @asset(
            name=body.__name__,
            partitions_def=REVALIDATION_PARTITIONS,
            group_name=group_name,
            deps=deps,
            description=description,
        )
        def replays(
            context: AssetExecutionContext, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
        ) -> MaterializeResult:
            return body(context, PartitionReplay(context, spec, storage, endpoint))

        return replays

    return decorate
