"""Fixtures every level shares: the session's zero-delay reference endpoint and a spec writer.

Tests are grouped by level: unit/ (pure functions, SQL on hand-built tables), integration/ (real
HTTP over loopback), e2e/ (whole Dagster graph runs, the UI, killed runs), real_model/ (llama.cpp
and Gemma). Builders (specs, raw-timing rows, canonical logs) live in support/; no test module
imports another."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from pipeline.reference import ReferenceServer


@pytest.fixture(scope="session")
def zero_server() -> Iterator[ReferenceServer]:
    """The zero-delay reference endpoint, started once per test session on a free loopback port."""
    with ReferenceServer("zero") as server:
        yield server


@pytest.fixture()
def write_spec(tmp_path: Path):
    """Write a spec dict (the demo spec with overrides applied by the test) to a YAML file."""

    def write(data: dict, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    return write
