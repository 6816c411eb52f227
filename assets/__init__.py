"""Thin Dagster assets and checks, one module per stage; the logic lives in `pipeline/`."""

from assets import accuracy, analysis, fingerprint, ingest, pack, replay, sweep

ASSET_MODULES = [ingest, fingerprint, replay, sweep, accuracy, analysis, pack]
