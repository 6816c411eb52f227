"""Thin Dagster assets and checks over `pipeline/`: one module per Dagster group (the module's
name is the group's name), each asset's checks beside it. `support/` holds what they share;
`automation.py` the job, sensor and schedule; `runner.py` how the CLI executes the job."""

from assets import accuracy, analysis, arms, pack, replay, sweep, workload

ASSET_MODULES = [workload, replay, sweep, accuracy, analysis, arms, pack]
