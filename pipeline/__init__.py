"""loadproof: re-validate an LLM inference vendor's benchmark claim under production load.

`pipeline` is the domain core: plain Python, no Dagster import (except the composition root
`pipeline.definitions`)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
