"""The demo-sized pack the whole-graph e2e tests share (tests/e2e/conftest.py builds it once per
session): the demo spec's two candidates, each on a zero-delay reference endpoint with an
accuracy oracle (fastserve-8b answers every labelled item right, budget-8b half of them), the
busiest 8 s of the bundled log, the demo's load sweep and all 200 items of the bundled slice,
written by `loadproof run` with an API key set.

The endpoints stop once the pack is written: tests read the pack folder and never write into it
(one that needs to change a pack copies the folder first). Under pytest-xdist the workers share
one pack (`shared_demo_pack`): the first to ask builds it, the others wait for it and read it.
The pack's Dagster instance folder is the one thing a reader might touch (opening an instance
can write to it): the tests that open or copy it share one worker (`INSTANCE_GROUP`)."""

from __future__ import annotations

import fcntl
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.reference import ReferenceServer
from tests.support.specs import DEMO_SLICE, demo_spec_dict, profile_file

API_KEY = "sk-loadproof-test-0123456789abcdef"
FIRST_VERSION = "2026-11-01"  # the model version both endpoints advertise
CANDIDATES = ("fastserve-8b", "budget-8b")
SLICE_ITEMS = 200  # the bundled slice's size: every item is scored
# the xdist group of the tests that open or copy the pack's `.dagster` (never two at once)
INSTANCE_GROUP = "demo_pack_instance"
RECORD = "demo_pack.yaml"  # what the build returned, beside the pack, for the workers that did not build it


@dataclass(frozen=True)
class DemoPack:
    folder: Path  # the pack folder `loadproof run --out` wrote
    spec: dict  # the spec it ran (its base URLs point at endpoints stopped since)
    exit_code: int
    output: str  # what the CLI printed


def demo_pack_spec(first_url: str, second_url: str) -> dict:
    data = demo_spec_dict()
    assert [candidate["name"] for candidate in data["candidates"]] == list(CANDIDATES)
    data["candidates"][0]["base_url"], data["candidates"][1]["base_url"] = first_url, second_url
    data["workload"]["sample"].update(window_s=8)
    data["workload"]["replay"].update(warmup_s=1, cooldown_s=1, max_duration_s=60)
    return data


def build_demo_pack(root: Path) -> DemoPack:
    perfect, coin = root / "oracle-perfect.yaml", root / "oracle-coin.yaml"
    perfect.write_text(f"answer_key: {DEMO_SLICE}\naccuracy: 1.0\n")
    coin.write_text(f"answer_key: {DEMO_SLICE}\naccuracy: 0.5\n")
    profile = profile_file(root, FIRST_VERSION)
    spec, out = root / "spec.yaml", root / "pack"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOADPROOF_DEMO_API_KEY", API_KEY)
        patch.delenv("DAGSTER_HOME", raising=False)
        with (
            ReferenceServer(profile, oracle=str(perfect)) as first,
            ReferenceServer(profile, oracle=str(coin)) as second,
        ):
            data = demo_pack_spec(first.base_url, second.base_url)
            spec.write_text(yaml.safe_dump(data, sort_keys=False))
            result = CliRunner().invoke(app, ["run", str(spec), "--out", str(out)])
    return DemoPack(folder=out, spec=data, exit_code=result.exit_code, output=result.output)


def run_temp_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's base temp folder, the same for every xdist worker (each worker's own basetemp is a
    folder in it): where what is built once per run lives."""
    root = tmp_path_factory.getbasetemp()
    return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root


def built_once(root: Path, record: str, build) -> Path:
    """`root/record`, written by `build(root)` once for every process that asks (the xdist workers of
    one run): the first caller builds under an exclusive lock; the others wait on the lock, then find
    the record. `build` writes the record last, so a build that raised leaves none and the next
    caller builds again."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (root / record).is_file():
            build(root)
    return root / record


def shared_demo_pack(root: Path) -> DemoPack:
    """The demo pack built into `root` once per run (`built_once`) with the result recorded beside
    it: every caller gets the recorded copy, so all workers see the same `DemoPack`."""

    def build(root: Path) -> None:
        pack = asdict(build_demo_pack(root))
        partial = (root / RECORD).with_suffix(".partial")
        partial.write_text(yaml.safe_dump({**pack, "folder": str(pack["folder"])}, sort_keys=False))
        os.replace(partial, root / RECORD)

    recorded = yaml.safe_load(built_once(root, RECORD, build).read_text())
    return DemoPack(**{**recorded, "folder": Path(recorded["folder"])})
