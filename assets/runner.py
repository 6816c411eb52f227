"""How the CLI (`loadproof demo|run`) executes the revalidation job: one partitioned run per
candidate at the model version it serves now, then the side-by-side comparison run, recorded in
a persistent Dagster instance (so `dagster dev` shows them afterwards)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dagster import (
    AssetKey,
    DagsterInstance,
    ExecuteInProcessResult,
    MultiPartitionKey,
    build_reconstructable_job,
    execute_job,
    load_assets_from_modules,
)

from assets import ASSET_MODULES
from assets.automation import REVALIDATION_JOB
from assets.support.partitions import register
from pipeline.definitions import build_definitions
from pipeline.pack.assemble.ui_links import DEFAULT_UI_URL
from pipeline.replay.fingerprint import fingerprint, version_key
from pipeline.replay.preflight import check_reachable
from pipeline.spec import load_spec
from resources import EndpointResource


def instance_for(out_dir: Path) -> DagsterInstance:
    """DAGSTER_HOME's instance when set; otherwise a persistent one inside the pack folder, so
    `DAGSTER_HOME=<out>/.dagster dagster dev` shows the run afterwards."""
    if os.environ.get("DAGSTER_HOME"):
        return DagsterInstance.get()
    home = Path(out_dir).resolve() / ".dagster"
    home.mkdir(parents=True, exist_ok=True)
    return DagsterInstance.local_temp(tempdir=str(home), overrides={"telemetry": {"enabled": False}})


COMPARISON = AssetKey("candidate_comparison")


def asset_keys_by_partitioning() -> tuple[list[AssetKey], list[AssetKey]]:
    """(the unpartitioned assets every candidate shares — log to plan, not the comparison;
    the candidate × version partitioned ones)."""
    shared, partitioned = [], []
    for assets_def in load_assets_from_modules(ASSET_MODULES):
        (partitioned if assets_def.partitions_def else shared).extend(assets_def.keys)
    shared.remove(COMPARISON)
    return shared, partitioned


def execute(
    spec_path: str | Path,
    out_dir: str | Path,
    base_url_overrides: dict[str, str] | None = None,
    ui_url: str = DEFAULT_UI_URL,
) -> list[ExecuteInProcessResult]:
    """Materialise the whole graph (every asset and check) for one spec into one pack folder:
    one run per candidate at the model version it serves now (a partition; the first run also
    ingests, samples and plans), then the side-by-side comparison run. Stops at the first
    failed run; every run's result is returned. Every candidate is probed first (reachable, key
    accepted): one that is not raises `CandidateUnreachable` before any run. `ui_url` is the Dagster
    UI each figure's lineage row in the pack links to."""
    definitions = build_definitions(spec_path, out_dir, base_url_overrides, ui_url)
    job = definitions.resolve_job_def(REVALIDATION_JOB)
    endpoint = EndpointResource(base_url_overrides=base_url_overrides or {})
    shared, partitioned = asset_keys_by_partitioning()
    spec = load_spec(spec_path).spec
    for candidate in spec.candidates:
        check_reachable(endpoint.target(candidate))
    results = []
    with instance_for(Path(out_dir)) as instance:
        for index, candidate in enumerate(spec.candidates):
            key = register(instance, candidate.name, version_key(fingerprint(endpoint.target(candidate))))
            selection = (shared if index == 0 else []) + partitioned
            # the shards need processes of their own; a Dask run's steps are the cluster's tasks
            if spec.workload.replay.shards > 1 or spec.workload.replay.executor == "dask":
                recipe = (str(spec_path), str(out_dir), json.dumps(base_url_overrides or {}), ui_url)
                results.append(execute_partition_multiprocess(recipe, instance, key, selection))
            else:
                results.append(
                    job.execute_in_process(
                        instance=instance, partition_key=key, asset_selection=selection, raise_on_error=False
                    )
                )
            if not results[-1].success:
                return results
        results.append(job.execute_in_process(instance=instance, asset_selection=[COMPARISON], raise_on_error=False))
    return results


def revalidation_job_for(spec_path: str, out_dir: str, base_url_overrides_json: str, ui_url: str = DEFAULT_UI_URL):
    """The job, rebuilt in each worker process of the multiprocess executor."""
    definitions = build_definitions(spec_path, out_dir, json.loads(base_url_overrides_json), ui_url)
    return definitions.resolve_job_def(REVALIDATION_JOB)


def execute_partition_multiprocess(
    recipe: tuple[str, ...], instance: DagsterInstance, key: MultiPartitionKey, selection: list[AssetKey]
):
    """One partition run on Dagster's multiprocess executor (every step a process of its own: the
    replay shards run side by side); the same job runs on the k8s or celery executors."""
    job = build_reconstructable_job(__name__, revalidation_job_for.__name__, reconstructable_args=recipe)
    tags = {
        "dagster/partition": str(key),
        **{f"dagster/partition/{name}": value for name, value in key.keys_by_dimension.items()},
    }
    with execute_job(job, instance=instance, tags=tags, asset_selection=selection, raise_on_error=False) as result:
        return result
