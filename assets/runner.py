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
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from dagster import (
    AssetKey,
    DagsterEvent,
    DagsterEventType,
    DagsterInstance,
    JobExecutionResult,
    MultiPartitionKey,
    build_reconstructable_job,
    in_process_executor,
    load_assets_from_modules,
    mem_io_manager,
)
from dagster._core.definitions.dependency import NodeHandle
from dagster._core.definitions.repository_definition.valid_definitions import SINGLETON_REPOSITORY_NAME
from dagster._core.execution.api import execute_run
from dagster._core.remote_origin import RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.workspace.load import location_origins_from_yaml_paths
from dagster._grpc.types import ExecuteRunArgs
from dagster._serdes import serialize_value

from assets import ASSET_MODULES
from assets.automation import REVALIDATION_JOB, RUN_CONFIG
from assets.support.partitions import register
from pipeline import REPO_ROOT, interrupts
from pipeline.contracts import PROMPT_PROFILE, REPLAY_PLAN
from pipeline.definitions import build_definitions
from pipeline.files.layout import PackLayout
from pipeline.pack.assemble.ui_links import DEFAULT_UI_URL
from pipeline.replay.endpoint.fingerprint import fingerprint, version_key
from pipeline.replay.endpoint.reachability import check_reachable
from pipeline.replay.pacing.engine import ReplaySettings
from pipeline.replay.production.auto_shards import one_process_enough, shards_from_files
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
) -> list[JobExecutionResult | RecordedRun]:
    """Materialise the whole graph (every asset and check) for one spec into one pack folder:
    one run per candidate at the model version it serves now (a partition; the first run also
    ingests, samples and plans), then the side-by-side comparison run. Stops at the first
    failed run; every run's result is returned. Every candidate is probed first (reachable, key
    accepted): one that is not raises `CandidateUnreachable` before any run. `ui_url` is the Dagster
    UI each figure's lineage row in the pack links to.

    Candidates that are independent endpoints (each its own base URL) are measured at the same
    time (`side_by_side`): the log-to-plan assets run first, alone, then every candidate's partition
    run in a process of its own (Dagster's own `dagster api execute_run`, as its run launcher
    starts a run), so a demo of two candidates takes the wall time of one."""
    endpoint = EndpointResource(base_url_overrides=base_url_overrides or {})
    shared, partitioned = asset_keys_by_partitioning()
    spec = load_spec(spec_path).spec
    targets = [endpoint.target(candidate) for candidate in spec.candidates]
    for target in targets:
        check_reachable(target)
    recipe = (str(spec_path), str(out_dir), json.dumps(base_url_overrides or {}), ui_url)
    # every candidate's fingerprint before the instance's folder is made: a candidate that keeps
    # failing its probes (pipeline/http_retry.py) leaves no empty pack folder behind
    versions = [version_key(fingerprint(target)) for target in targets]
    interrupts.raise_if_stopped("the Dagster runs")  # a signal before them: no run, the folder untouched
    interrupts.note_writing()
    results, not_started = execute_runs(recipe, spec, targets, versions, shared, partitioned)
    if interrupts.stop_requested():
        note_stopped_steps(recipe, results, not_started)
    return results


FIRST_PARTITION_STEP = "endpoint_fingerprint"  # a candidate's partition run starts by probing it


def execute_runs(
    recipe, spec, targets, versions, shared, partitioned
) -> tuple[list[JobExecutionResult | RecordedRun], str | None]:
    """The Dagster runs of `execute`, into the instance of the pack folder (`recipe[1]`); and, where
    a failure or a stop ended them early, the first step of the run not started."""
    results: list[JobExecutionResult | RecordedRun] = []
    replay = spec.workload.replay
    one = one_process_enough(replay.shards, replay.mode, replay.concurrency, replay.max_concurrency)
    in_process = one and replay.executor != "dask"
    # `shards: auto` not surely one: the shared inputs (the plan, the profile) first, then sized
    shared_first = side_by_side(spec, targets) or not one
    with instance_for(Path(recipe[1])) as instance:
        keys = [register(instance, candidate.name, version) for candidate, version in zip(spec.candidates, versions)]
        if shared_first:
            results.append(execute_recorded(recipe, instance, shared, {}, in_process=True))
            if not results[-1].success or interrupts.stop_requested():  # a stop: no next run
                return results, FIRST_PARTITION_STEP
            in_process = in_process or (sized_shards(spec, Path(recipe[1])) == 1 and replay.executor != "dask")
            shared = []
        if side_by_side(spec, targets):
            results += execute_side_by_side(recipe, instance, keys, partitioned, in_process)
            if not all(result.success for result in results) or interrupts.stop_requested():
                return results, COMPARISON.to_user_string()
        else:
            for index, key in enumerate(keys):
                selection = (shared if index == 0 else []) + partitioned
                tags = partition_tags(key)
                results.append(execute_recorded(recipe, instance, selection, tags, in_process=in_process))
                if not results[-1].success or interrupts.stop_requested():
                    last = index == len(keys) - 1
                    return results, COMPARISON.to_user_string() if last else FIRST_PARTITION_STEP
        results.append(execute_recorded(recipe, instance, [COMPARISON], {}, in_process=True))
    return results, None


def sized_shards(spec, out: Path) -> int:
    """The shards `plan_replay_shards` will fan out into, from the shared inputs written in `out`."""
    replay, layout = spec.workload.replay, PackLayout(out)
    settings = ReplaySettings.from_spec(replay, spec.privacy.text)
    plan, profile = layout.path(REPLAY_PLAN), layout.path(PROMPT_PROFILE)
    return shards_from_files(replay.shards, plan, profile, settings, replay.until is not None)[0]


def note_stopped_steps(
    recipe: tuple[str, ...], results: list[JobExecutionResult | RecordedRun], not_started: str | None
) -> None:
    """After a stop, the steps it failed (each refused to start, or its replay was cut short), else
    the first step of the run it kept from starting, with their stage (the asset group), for
    `INTERRUPTED.json` (`interrupts.note_stopped`)."""
    failed = [
        event.step_key
        for result in results
        for event in result.all_events
        if event.event_type == DagsterEventType.STEP_FAILURE and event.step_key
    ]
    steps = list(dict.fromkeys(failed)) or ([not_started] if not_started else [])
    if steps:
        groups = step_groups(revalidation_job_for(*recipe))
        interrupts.note_stopped([(step, groups.get(step.split(".")[0], "")) for step in steps])


def step_groups(job) -> dict[str, str]:
    """Each top-level step's asset group (an asset check's: its asset's), by node name."""
    layer = job.asset_layer
    groups = {}
    for name in job.graph.node_dict:
        assets_def = layer.get_assets_def_for_node(NodeHandle(name, None))
        if assets_def is None:
            continue
        keys = list(assets_def.keys) or [check.asset_key for check in assets_def.check_keys]
        groups[name] = layer.asset_graph.get(keys[0]).group_name if keys else ""
    return groups


def side_by_side(spec, targets) -> bool:
    """Measure the candidates at the same time: more than one, each its own endpoint (two candidates
    behind one base URL would load each other's replay), unless the spec says one at a time."""
    urls = [target.base_url for target in targets]
    return spec.workload.replay.candidates_side_by_side and len(urls) > 1 and len(set(urls)) == len(urls)


@dataclass
class RecordedRun:
    """A run executed in another process, read back from the instance's event log: what the CLI
    reads of a `JobExecutionResult` (its id, success, events and asset-check evaluations)."""

    run_id: str
    success: bool
    all_events: list[DagsterEvent] = field(default_factory=list)

    @classmethod
    def read(cls, instance: DagsterInstance, run_id: str) -> RecordedRun:
        events = [entry.dagster_event for entry in instance.all_logs(run_id) if entry.dagster_event is not None]
        success = any(event.event_type == DagsterEventType.RUN_SUCCESS for event in events)
        return cls(run_id, success, events)

    def get_asset_check_evaluations(self) -> list:
        return [
            event.event_specific_data
            for event in self.all_events
            if event.event_type == DagsterEventType.ASSET_CHECK_EVALUATION
        ]


def execute_side_by_side(
    recipe: tuple[str, ...],
    instance: DagsterInstance,
    keys: list[MultiPartitionKey],
    selection: list[AssetKey],
    in_process: bool,
) -> list[RecordedRun]:
    """Each partition's run (created here, with the code location's origin) executed at once, each
    by `dagster api execute_run` in a process of its own; waits for them all. A process still
    running when this one is interrupted is terminated with it."""
    job = build_reconstructable_job(
        __name__,
        revalidation_job_for.__name__,
        reconstructable_args=recipe,
        reconstructable_kwargs={"in_process": in_process},
    )
    runs = [create_recorded_run(job, recipe, instance, selection, partition_tags(key)) for key in keys]
    processes = []
    try:
        for run in runs:
            args = ExecuteRunArgs(
                job_origin=job.get_python_origin(),
                run_id=run.run_id,
                instance_ref=instance.get_ref(),
                set_exit_code_on_failure=True,
            )
            command = [sys.executable, "-m", "dagster", "api", "execute_run", serialize_value(args)]
            # a process group of its own: a terminal's Ctrl-C reaches the CLI, which stops this run
            # through the stop file (pipeline/interrupts.py), not Dagster's helpers' tracebacks
            processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, process_group=0))
            interrupts.at_forced_exit(processes[-1].kill)  # a forced exit (pipeline/interrupts.py) runs no finally
        for process in processes:
            process.wait()
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                process.wait()
    return [RecordedRun.read(instance, run.run_id) for run in runs]


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


def create_recorded_run(job, recipe: tuple[str, ...], instance: DagsterInstance, selection: list[AssetKey], tags):
    """The run record of `job` (rebuilt from `recipe`) with the code location's origin
    (`code_location_origin`), as `dagster dev` records a run launched from its UI."""
    return instance.create_run_for_job(
        job_def=job.get_definition(),
        run_config=run_config_for(recipe),
        tags=tags,
        asset_selection=frozenset(selection),
        remote_job_origin=code_location_origin(),
        job_code_origin=job.get_python_origin(),
    )


def execute_recorded(
    recipe: tuple[str, ...],
    instance: DagsterInstance,
    selection: list[AssetKey],
    tags: dict[str, str],
    in_process: bool,
) -> JobExecutionResult:
    """One run of the job `recipe` rebuilds (`create_recorded_run`), executed here: in this process,
    or on the job's executor."""
    job = build_reconstructable_job(
        __name__,
        revalidation_job_for.__name__,
        reconstructable_args=recipe,
        reconstructable_kwargs={"in_process": in_process},
    )
    return execute_run(job, create_recorded_run(job, recipe, instance, selection, tags), instance)


def execute_partition_multiprocess(
    recipe: tuple[str, ...], instance: DagsterInstance, key: MultiPartitionKey, selection: list[AssetKey]
) -> JobExecutionResult:
    """One partition run on Dagster's multiprocess executor (every step a process of its own: the
    replay shards run side by side); the same job runs on the k8s or celery executors."""
    return execute_recorded(recipe, instance, selection, partition_tags(key), in_process=False)
