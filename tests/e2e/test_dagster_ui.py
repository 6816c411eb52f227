"""`dagster dev` on loopback: its GraphQL API shows every asset, every check and the lineage edges."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from pipeline import REPO_ROOT
from pipeline.reference.managed_server import free_port
from tests.support.specs import ASSETS

pytestmark = pytest.mark.slow

STARTUP_TIMEOUT_S = 120
STOP_TIMEOUT_S = 30
QUERY = """
{ assetNodes {
    assetKey { path }
    dependencyKeys { path }
    assetChecksOrError { ... on AssetChecks { checks { name blocking } } }
} }
"""


@pytest.fixture(scope="module")
def dagster_ui(tmp_path_factory):
    home = tmp_path_factory.mktemp("dagster_home")
    shutil.copy(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    dagster = Path(sys.executable).with_name("dagster")
    process = subprocess.Popen(
        [str(dagster), "dev", "-h", "127.0.0.1", "-p", str(port), "-w", str(REPO_ROOT / "workspace.yaml")],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the webserver, daemon and code server stop together
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            assert process.poll() is None, process.stderr.read().decode()[-2000:]
            try:
                if httpx.get(f"{url}/server_info", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "dagster dev did not answer in time"
            time.sleep(0.5)  # polling interval, not a wait for readiness
        yield url
    finally:
        # `dagster dev` shuts its children down on SIGINT; SIGKILL the group only if it hangs.
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_graphql_shows_every_asset_check_and_lineage_edge(dagster_ui):
    response = httpx.post(f"{dagster_ui}/graphql", json={"query": QUERY}, timeout=30)
    nodes = {node["assetKey"]["path"][-1]: node for node in response.json()["data"]["assetNodes"]}
    assert set(ASSETS) <= set(nodes)
    edges = {(dep["path"][-1], name) for name, node in nodes.items() for dep in node["dependencyKeys"]}
    assert {
        ("production_logs", "production_sample"),
        ("replay_plan", "raw_timings"),
        ("raw_timings", "latency_percentiles"),
        ("latency_percentiles", "evidence_pack"),
    } <= edges
    for name in ASSETS:
        assert nodes[name]["assetChecksOrError"]["checks"], f"{name} has no check"
    blocking = {
        check["name"] for node in nodes.values() for check in node["assetChecksOrError"]["checks"] if check["blocking"]
    }
    assert "raw_timings_one_row_per_planned_request" in blocking
