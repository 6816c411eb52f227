"""The composition root: the one place that builds the Dagster `defs` (workspace.yaml loads it).

`dagster dev` shows these definitions with the demo spec and out/dev as defaults; the CLI
(`loadproof demo|run`) builds the same definitions with its own spec and pack folder and
executes the same job in process, recording the run in a persistent Dagster instance.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import (
    DagsterInstance,
    Definitions,
    ExecuteInProcessResult,
    load_asset_checks_from_modules,
    load_assets_from_modules,
)

from assets import ASSET_MODULES
from assets.automation import REVALIDATION_JOB, new_model_version, revalidation_job, weekly_revalidation
from pipeline import REPO_ROOT
from resources import EndpointResource, PackStorage, SpecResource

DEFAULT_SPEC = REPO_ROOT / "examples" / "demo.yaml"
DEFAULT_OUT = REPO_ROOT / "out" / "dev"

def build_definitions(
    spec_path: str | Path = DEFAULT_SPEC,
    out_dir: str | Path = DEFAULT_OUT,
    base_url_overrides: dict[str, str] | None = None,
) -> Definitions:
    return Definitions(
        assets=load_assets_from_modules(ASSET_MODULES),
        asset_checks=load_asset_checks_from_modules(ASSET_MODULES),
        jobs=[revalidation_job],
        schedules=[weekly_revalidation],
        sensors=[new_model_version],
        resources={
            "spec": SpecResource(spec_path=str(spec_path)),
            "storage": PackStorage(out_dir=str(out_dir)),
            "endpoint": EndpointResource(base_url_overrides=base_url_overrides or {}),
        },
    )


defs = build_definitions()


def instance_for(out_dir: Path) -> DagsterInstance:
    """DAGSTER_HOME's instance when set; otherwise a persistent one inside the pack folder, so
    `DAGSTER_HOME=<out>/.dagster dagster dev` shows the run afterwards."""
    if os.environ.get("DAGSTER_HOME"):
        return DagsterInstance.get()
    home = Path(out_dir).resolve() / ".dagster"
    home.mkdir(parents=True, exist_ok=True)
    return DagsterInstance.local_temp(tempdir=str(home), overrides={"telemetry": {"enabled": False}})


def execute(
    spec_path: str | Path, out_dir: str | Path, base_url_overrides: dict[str, str] | None = None
) -> ExecuteInProcessResult:
    """Materialise the whole graph (every asset and check) for one spec into one pack folder."""
    definitions = build_definitions(spec_path, out_dir, base_url_overrides)
    job = definitions.resolve_job_def(REVALIDATION_JOB)
    with instance_for(Path(out_dir)) as instance:
        return job.execute_in_process(instance=instance, raise_on_error=False)
