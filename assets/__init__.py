"""Thin Dagster assets and checks, one module per stage; the logic lives in `pipeline/`."""

from assets import analysis, ingest, pack, replay

ASSET_MODULES = [ingest, replay, analysis, pack]
