"""Thin Dagster assets and checks, one module per stage; the logic lives in `pipeline/`."""

from assets import accuracy, analysis, fingerprint, ingest, pack, replay

ASSET_MODULES = [ingest, fingerprint, replay, accuracy, analysis, pack]
