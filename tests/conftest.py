"""Shared fixtures: a running reference endpoint and small specs pointing at the bundled log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from pipeline import REPO_ROOT
from pipeline.reference import ReferenceServer

DEMO_LOG = REPO_ROOT / "examples" / "data" / "production_requests.jsonl"
DEMO_SPEC = REPO_ROOT / "examples" / "demo.yaml"
DEMO_SLICE = REPO_ROOT / "examples" / "data" / "banking77_slice.csv"


@pytest.fixture(scope="session")
def zero_server() -> Iterator[ReferenceServer]:
    """The zero-delay reference endpoint, started once per test session on a free loopback port."""
    with ReferenceServer("zero") as server:
        yield server


def demo_spec_dict() -> dict:
    data = yaml.safe_load(DEMO_SPEC.read_text())
    data["workload"]["log"]["path"] = str(DEMO_LOG)
    if data.get("accuracy"):
        data["accuracy"]["path"] = str(DEMO_SLICE)
    return data


@pytest.fixture()
def write_spec(tmp_path: Path):
    """Write a spec dict (the demo spec with overrides applied by the test) to a YAML file."""

    def write(data: dict, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    return write
