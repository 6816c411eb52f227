"""The composition root: what the code location holds (workspace.yaml loads `defs`).

`dagster dev` shows these definitions with the demo spec and the demo's pack folder (out/demo,
what `make demo` writes, beside the instance `make dev` opens: out/demo/.dagster) as defaults, so
a run launched from the UI writes where the runs it lists wrote; the CLI (`loadproof demo|run`)
builds the same definitions with its own spec and pack folder and runs them through `assets.runner`.

The executor comes from the spec: Dagster's default (multiprocess for a reconstructable run,
which is how the CLI runs a sharded partition) unless `workload.replay.executor: dask`, which
puts every step of such a run on a Dask cluster (`assets/support/dask_executor.py`): the
scheduler at `workload.replay.dask_scheduler`, or a local cluster of `shards` worker processes.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import (
    Definitions,
    ExecutorDefinition,
    load_asset_checks_from_modules,
    load_assets_from_modules,
)

from assets import ASSET_MODULES
from assets.automation import new_model_version, revalidation_job, weekly_revalidation
from assets.support.dask_executor import dask_step_executor
from pipeline import REPO_ROOT
from pipeline.pack.assemble.ui_links import DEFAULT_UI_URL
from pipeline.spec import load_spec
from resources import EndpointResource, PackStorage, SpecResource

DEFAULT_SPEC = REPO_ROOT / "examples" / "demo.yaml"
DEFAULT_OUT = REPO_ROOT / "out" / "demo"  # `make demo`'s folder


def build_definitions(
    spec_path: str | Path = DEFAULT_SPEC,
    out_dir: str | Path = DEFAULT_OUT,
    base_url_overrides: dict[str, str] | None = None,
    ui_url: str = DEFAULT_UI_URL,
) -> Definitions:
    return Definitions(
        executor=executor_for(spec_path),
        assets=load_assets_from_modules(ASSET_MODULES),
        asset_checks=load_asset_checks_from_modules(ASSET_MODULES),
        jobs=[revalidation_job],
        schedules=[weekly_revalidation],
        sensors=[new_model_version],
        resources={
            "spec": SpecResource(spec_path=str(spec_path)),
            "storage": PackStorage(out_dir=str(out_dir), ui_url=ui_url),
            "endpoint": EndpointResource(base_url_overrides=base_url_overrides or {}),
        },
    )


def executor_for(spec_path: str | Path) -> ExecutorDefinition | None:
    """The spec's executor: None (Dagster's default) unless the replay asks for Dask (a spec
    path that is not there yet also gets the default: SpecResource says what is wrong at run time)."""
    if not Path(spec_path).is_file():
        return None
    replay = load_spec(spec_path).spec.workload.replay
    if replay.executor != "dask":
        return None
    config: dict = {"n_workers": replay.shards if isinstance(replay.shards, int) else os.cpu_count() or 1}
    if replay.dask_scheduler:
        config["address"] = replay.dask_scheduler
    return dask_step_executor.configured(config)


defs = build_definitions()
