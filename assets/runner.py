"""How the CLI (`loadproof demo|run`) executes the revalidation job: one partitioned run per
candidate at the model version it serves now, then the side-by-side comparison run, recorded in
a persistent Dagster instance (so `dagster dev` shows them afterwards).

The runs execute in the CLI's process (a sharded or Dask partition on Dagster's multiprocess
executor), with the CLI's spec and pack folder, yet each is recorded as a run of the code location
`workspace.yaml` names (`code_location_origin`), the one `make dev` / `dagster dev` loads: the
UI's Overview timeline, the run list and each asset's history show it under that location like a
run launched from the UI (a run with no origin is left off the timeline). Its run config carries
the resources it ran with (spec, pack folder, base URLs, UI address), so re-executing it from the
UI measures the same spec into the same folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dagster import (
    AssetKey,
    DagsterInstance,
    JobExecutionResult,
    MultiPartitionKey,
    build_reconstructable_job,
    in_process_executor,
    load_assets_from_modules,
    mem_io_manager,
)
from dagster._core.definitions.repository_definition.valid_definitions import SINGLETON_REPOSITORY_NAME
from dagster._core.execution.api import execute_run
from dagster._core.remote_origin import RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.workspace.load import location_origins_from_yaml_paths

from assets import ASSET_MODULES
from assets.automation import REVALIDATION_JOB, RUN_CONFIG
from assets.support.partitions import register
from pipeline import REPO_ROOT
from pipeline.definitions import build_definitions
from pipeline.pack.assemble.ui_links import DEFAULT_UI_URL
from pipeline.replay.fingerprint import fingerprint, version_key
from pipeline.replay.preflight import check_reachable
from pipeline.spec import load_spec
from resources import EndpointResource

WORKSPACE = REPO_ROOT / "workspace.yaml"  # the code location `dagster dev -w workspace.yaml` loads
COMPARISON = AssetKey("candidate_comparison")


def instance_for(out_dir: Path) -> DagsterInstance:
    """DAGSTER_HOME's instance when set; otherwise a persistent one inside the pack folder, so
    `DAGSTER_HOME=<out>/.dagster dagster dev` shows the run afterwards."""
    if os.environ.get("DAGSTER_HOME"):
        return DagsterInstance.get()
    home = Path(out_dir).resolve() / ".dagster"
    home.mkdir(parents=True, exist_ok=True)
    return DagsterInstance.local_temp(tempdir=str(home), overrides={"telemetry": {"enabled": False}})


def code_location_origin(job_name: str = REVALIDATION_JOB) -> RemoteJobOrigin:
    """The job as the code location of `workspace.yaml` holds it: the origin `dagster dev` gives a
    run launched from its UI (location `loadproof`, the Definitions' one repository), read from the
    same file with Dagster's own workspace loader, without starting the code server."""
    origins = location_origins_from_yaml_paths([str(WORKSPACE)])
    if len(origins) != 1:
        raise ValueError(f"{WORKSPACE}: expected one code location, found {[o.location_name for o in origins]}")
    return RemoteJobOrigin(RemoteRepositoryOrigin(origins[0], SINGLETON_REPOSITORY_NAME), job_name)


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
) -> list[JobExecutionResult]:
    """Materialise the whole graph (every asset and check) for one spec into one pack folder:
    one run per candidate at the model version it serves now (a partition; the first run also
    ingests, samples and plans), then the side-by-side comparison run. Stops at the first
    failed run; every run's result is returned. Every candidate is probed first (reachable, key
    accepted): one that is not raises `CandidateUnreachable` before any run. `ui_url` is the Dagster
    UI each figure's lineage row in the pack links to."""
    endpoint = EndpointResource(base_url_overrides=base_url_overrides or {})
    shared, partitioned = asset_keys_by_partitioning()
    spec = load_spec(spec_path).spec
    for candidate in spec.candidates:
        check_reachable(endpoint.target(candidate))
    recipe = (str(spec_path), str(out_dir), json.dumps(base_url_overrides or {}), ui_url)
    # the shards need processes of their own; a Dask run's steps are the cluster's tasks
    in_process = spec.workload.replay.shards == 1 and spec.workload.replay.executor != "dask"
    results = []
    # the first candidate's fingerprint before the instance's folder is made: a candidate that keeps
    # failing its probes (pipeline/http_retry.py) leaves no empty pack folder behind
    first_version = version_key(fingerprint(endpoint.target(spec.candidates[0])))
    with instance_for(Path(out_dir)) as instance:
        for index, candidate in enumerate(spec.candidates):
            version = first_version if index == 0 else version_key(fingerprint(endpoint.target(candidate)))
            key = register(instance, candidate.name, version)
            selection = (shared if index == 0 else []) + partitioned
            results.append(execute_recorded(recipe, instance, selection, partition_tags(key), in_process=in_process))
            if not results[-1].success:
                return results
        results.append(execute_recorded(recipe, instance, [COMPARISON], {}, in_process=True))
    return results


def revalidation_job_for(
    spec_path: str, out_dir: str, base_url_overrides_json: str, ui_url: str = DEFAULT_UI_URL, in_process: bool = False
):
    """The job, rebuilt in each process that runs its steps. `in_process`: every step in the
    calling process, step outputs kept in memory (what `execute_in_process` does)."""
    definitions = build_definitions(spec_path, out_dir, json.loads(base_url_overrides_json), ui_url)
    job = definitions.resolve_job_def(REVALIDATION_JOB)
    if not in_process:
        return job
    return job.with_executor_def(in_process_executor).with_top_level_resources(
        {**job.resource_defs, "io_manager": mem_io_manager}
    )


def partition_tags(key: MultiPartitionKey) -> dict[str, str]:
    return {
        "dagster/partition": str(key),
        **{f"dagster/partition/{name}": value for name, value in key.keys_by_dimension.items()},
    }


def run_config_for(recipe: tuple[str, ...]) -> dict:
    """The resources the run's job was built with, in its run config: what a re-execution from the
    UI (the code location's job, with this run's config) needs to measure the same spec into the
    same folder."""
    spec_path, out_dir, base_url_overrides_json, *rest = recipe
    return {
        **RUN_CONFIG,
        "resources": {
            "spec": {"config": {"spec_path": spec_path}},
            "storage": {"config": {"out_dir": out_dir, "ui_url": rest[0] if rest else DEFAULT_UI_URL}},
            "endpoint": {"config": {"base_url_overrides": json.loads(base_url_overrides_json)}},
        },
    }


def execute_recorded(
    recipe: tuple[str, ...],
    instance: DagsterInstance,
    selection: list[AssetKey],
    tags: dict[str, str],
    in_process: bool,
) -> JobExecutionResult:
    """One run of the job `recipe` rebuilds, created with the code location's origin
    (`code_location_origin`), then executed here: in this process, or on the job's executor."""
    job = build_reconstructable_job(
        __name__,
        revalidation_job_for.__name__,
        reconstructable_args=recipe,
        reconstructable_kwargs={"in_process": in_process},
    )
    run = instance.create_run_for_job(
        job_def=job.get_definition(),
        run_config=run_config_for(recipe),
        tags=tags,
        asset_selection=frozenset(selection),
        remote_job_origin=code_location_origin(),
        job_code_origin=job.get_python_origin(),
    )
    return execute_run(job, run, instance)


def execute_partition_multiprocess(
    recipe: tuple[str, ...], instance: DagsterInstance, key: MultiPartitionKey, selection: list[AssetKey]
) -> JobExecutionResult:
    """One partition run on Dagster's multiprocess executor (every step a process of its own: the
    replay shards run side by side); the same job runs on the k8s or celery executors."""
    return execute_recorded(recipe, instance, selection, partition_tags(key), in_process=False)
