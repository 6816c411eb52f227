"""`dagster dev` on loopback: its GraphQL API shows every asset, every check and the lineage edges."""

import httpx
import pytest

from tests.support.dagster_dev import dagster_dev
from tests.support.specs import ASSETS

pytestmark = pytest.mark.slow

QUERY = """
{ assetNodes {
    assetKey { path }
    dependencyKeys { path }
    assetChecksOrError { ... on AssetChecks { checks { name blocking } } }
} }
"""


@pytest.fixture(scope="module")
def dagster_ui(tmp_path_factory):
    """`dagster dev` on an empty instance (tests/support/dagster_dev.py: the project's dagster.yaml,
    polled until its code location has loaded)."""
    with dagster_dev(tmp_path_factory.mktemp("dagster_home")) as url:
        yield url


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
