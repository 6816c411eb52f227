"""Fixtures every level shares: the session's zero-delay reference endpoint and a spec writer.

Tests are grouped by level: unit/ (pure functions, SQL on hand-built tables), integration/ (real
HTTP over loopback), e2e/ (whole Dagster graph runs, the UI, killed runs), real_model/ (llama.cpp
and Gemma). Builders (specs, raw-timing rows, canonical logs) live in support/; no test module
imports another.

`make test` runs the tests on several pytest-xdist workers (`-n`, `--dist loadgroup`): a test goes
to whichever worker is free, except that `pytest_collection_modifyitems` below keeps on one worker
the tests of a module with a module-scoped fixture (built once; its tests keep their written order,
and some change its state) and the real-model tests (one llama.cpp server at a time, one writer of
the GGUF cache). The session's demo pack is built once per run whatever the workers
(tests/e2e/conftest.py). Under xdist the slow tests are also handed out first, so that none starts
last: the first demo-pack reader (whose worker builds the pack), then the other slow and real-model
tests, then the other demo-pack readers (the pack is built by then), then the rest. Each worker
takes its own share of the free loopback ports (`pytest_configure`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from pipeline.reference import ReferenceServer, managed_server


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


def pytest_configure(config: pytest.Config) -> None:
    """On an xdist worker, servers take loopback ports that no other worker can be given.

    `free_port` hands out a port that was free a moment ago; the server binds it a second or two
    later, once it has started. Two workers starting servers at once could be handed the same port
    in that gap, and one test would talk to the other's server. So worker k of n takes only the
    ports p with p // 2 equal to k modulo n (Linux hands out odd ports for bind(0), so p itself
    modulo n would starve the even workers); it asks the OS again until it gets one. Test modules
    import `free_port` after this runs, and `ManagedServer` looks it up on its module, so every
    server is covered."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if worker.startswith("gw") and count.isdigit() and int(count) > 1:
        index, workers, any_port = int(worker[2:]), int(count), managed_server.free_port

        def free_port(host: str = managed_server.LOOPBACK_HOST) -> int:
            for _ in range(100 * workers):
                if (port := any_port(host)) // 2 % workers == index:
                    return port
            raise RuntimeError(f"no free port of worker {worker}'s share after {100 * workers} tries")

        managed_server.free_port = free_port


REAL_MODEL_GROUP = "real_model"
SHARED_SCOPES = {"package", "module", "class"}


def xdist_group(item: pytest.Item) -> str | None:
    """The worker group `item` must share (None: any worker will do)."""
    if item.get_closest_marker("real_model"):
        return REAL_MODEL_GROUP
    # pytest's own record of the fixtures a test uses, with their scopes (the pinned pytest's)
    fixture_info = getattr(item, "_fixtureinfo", None)
    if fixture_info is not None and any(
        defs and defs[-1].scope in SHARED_SCOPES for defs in fixture_info.name2fixturedefs.values()
    ):
        return item.nodeid.split("::", 1)[0]
    return None


def dispatch_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """The items slow first (see the module docstring), a group's items where its first lands,
    otherwise in collection order."""

    def uses_demo_pack(item: pytest.Item) -> bool:
        return "demo_pack" in getattr(item, "fixturenames", ())

    def unit(item: pytest.Item) -> str:
        groups = sorted(str(mark.args[0]) for mark in item.iter_markers("xdist_group"))
        return "@".join(groups) if groups else item.nodeid

    first_reader = next((unit(item) for item in items if uses_demo_pack(item)), None)

    def rank(item: pytest.Item) -> int:
        if unit(item) == first_reader:
            return 0
        if uses_demo_pack(item):
            return 2
        return 1 if item.get_closest_marker("slow") or item.get_closest_marker("real_model") else 3

    ranks: dict[str, int] = {}
    for item in items:
        ranks[unit(item)] = min(ranks.get(unit(item), 3), rank(item))
    return sorted(items, key=lambda item: ranks[unit(item)])  # stable: collection order within a rank


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the marks into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that must share a worker; a test's own `xdist_group` mark, where one is
    written, wins. On an xdist worker, also put them in dispatch order (every worker sorts the
    same collection the same way, as xdist requires; `--no-loadscope-reorder` keeps the order)."""
    for item in items:
        group = None if item.get_closest_marker("xdist_group") else xdist_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = dispatch_order(items)
        if getattr(config.option, "loadgroup", False):  # a worker's `--dist loadgroup`
            for item in items:
                name_group(item)


def name_group(item: pytest.Item) -> None:
    """Give the test's id the `@group` suffix by which `--dist loadgroup` keeps a group on one worker.
    xdist 3.8 writes that suffix to `item._nodeid`, which pytest 9 no longer reads (the id lives in
    `item._id`), so its groups would silently spread over the workers; write it where pytest reads it."""
    groups = sorted({str(mark.args[0]) for mark in item.iter_markers("xdist_group")})
    if groups and "@" not in item.nodeid.rpartition("]")[2]:
        item._id = type(item._id).parse(f"{item.nodeid}@{'_'.join(groups)}")
