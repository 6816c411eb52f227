"""The composition root: what the code location holds (workspace.yaml loads `defs`).

`dagster dev` shows these definitions with the demo spec and out/dev as defaults; the CLI
(`loadproof demo|run`) builds the same definitions with its own spec and pack folder and runs
them through `assets.runner`.
"""

from __future__ import annotations

from pathlib import Path

from dagster import (
    Definitions,
    load_asset_checks_from_modules,
    load_assets_from_modules,
)

from assets import ASSET_MODULES
from assets.automation import new_model_version, revalidation_job, weekly_revalidation
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
