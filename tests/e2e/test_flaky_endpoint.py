"""A candidate that answers 30 % of requests with a 500 is measured, not a crashed run (issue 43,
item 3): the endpoint fingerprint's probes (twice: the partition's version key and the
`endpoint_fingerprint` asset) are retried through `pipeline/http_retry.py`, the whole graph
materialises, and the pack's error rate says 30 %: its interval holds 0.30. The replay's own
requests are not retried (`workload.replay.retries` is 0), so each injected 500 is one error.

The reference endpoint draws its faults from a RNG seeded with the profile's seed, once per
request in arrival order: seed 7's stream has 30 draws under 0.30 among those the ~91 replayed
requests take (seed 0's has 17: a low stretch of one stream, not what the pipeline measures)."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.reference import ReferenceServer, load_profile
from tests.support.specs import small_spec

FAULT_RATE = 0.30
KEY_ENV = "LOADPROOF_DEMO_API_KEY"


@pytest.mark.slow
def test_a_30_percent_faulty_endpoint_gives_a_pack_whose_error_rate_says_30_percent(write_spec, tmp_path, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv(KEY_ENV, "flaky-test-key")
    profile = load_profile("zero").model_dump()
    profile.update(seed=7, faults={**profile["faults"], "rates": {"5xx": FAULT_RATE}})
    profile_path = tmp_path / "flaky.yaml"
    profile_path.write_text(yaml.safe_dump(profile))
    with ReferenceServer(str(profile_path)) as server:
        data = yaml.safe_load(small_spec(write_spec, server.base_url).read_text())
        data["workload"]["sample"].update(window_s=20, max_requests=200)
        for part in ("sweep", "arms"):  # the production replay alone: the figure asked for
            data["workload"]["replay"].pop(part)
        data.pop("accuracy")
        data["claim"]["figures"].pop("accuracy")
        data["sla"].pop("per_user")
        pack = tmp_path / "pack"
        result = CliRunner().invoke(app, ["run", str(write_spec(data)), "--out", str(pack)])
    assert result.exit_code == 0, result.output
    document = json.loads((pack / "evidence_pack.json").read_text())
    (error_rate,) = [f for f in document["figures"] if f["metric"] == "error_rate" and f["basis"] == "production_load"]
    assert error_rate["n"] > 50
    assert error_rate["ci_low"] <= FAULT_RATE <= error_rate["ci_high"], error_rate


def test_a_candidate_whose_probes_keep_failing_is_named_with_its_status_and_the_run_exits_1(
    write_spec, tmp_path, monkeypatch
):
    """Every completion answered 500 (its models list answers): the preflight passes, the
    fingerprint's probe fails after its retries, in one line naming the candidate and the status;
    a failed run (exit 1), before any Dagster run or folder."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv(KEY_ENV, "flaky-test-key")
    profile = load_profile("zero").model_dump()
    profile.update(faults={**profile["faults"], "rates": {"5xx": 1.0}})
    profile_path = tmp_path / "broken.yaml"
    profile_path.write_text(yaml.safe_dump(profile))
    pack = tmp_path / "pack"
    with ReferenceServer(str(profile_path)) as server:
        result = CliRunner().invoke(app, ["run", str(small_spec(write_spec, server.base_url)), "--out", str(pack)])
        errors = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert result.exit_code == 1 and errors == [
            f"error: candidate 'fastserve-8b' at {server.base_url}: the fingerprint's probe (POST "
            "/v1/chat/completions) answered HTTP 500 Internal Server Error after 5 tries (429, 5xx and resets are "
            "retried with backoff)"
        ], result.output
    assert "Traceback" not in result.output and not pack.exists()
