"""Thin Dagster assets and checks, one module per stage; the logic lives in `pipeline/`."""

from assets import accuracy, analysis, ingest, pack, replay

ASSET_MODULES = [ingest, replay, accuracy, analysis, pack]
