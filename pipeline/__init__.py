"""loadproof: re-validate an LLM inference vendor's benchmark claim under production load.

`pipeline` is the domain core: plain Python, no Dagster import, one package per stage (spec,
workload, plan, replay, accuracy, duck, analysis, quality, pack, reference; ARCHITECTURE.md maps
them). Its app edge is `definitions` (the Dagster code location) and `cli` (the `loadproof`
command); only those two reach Dagster, through `assets/`."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
