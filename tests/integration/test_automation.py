"""The new-version sensor and the weekly schedule, against a reference endpoint whose version changes."""

import json
from datetime import UTC, datetime
from pathlib import Path

from dagster import (
    DagsterInstance,
    DefaultSensorStatus,
    SensorResult,
    SkipReason,
    build_schedule_context,
    build_sensor_context,
)

from assets.automation import new_model_version, weekly_revalidation
from pipeline import REPO_ROOT
from pipeline.definitions import defs
from pipeline.reference import ReferenceServer, load_profile
from pipeline.reference.managed_server import free_port
from pipeline.replay.endpoint.fingerprint import fingerprint, legacy_version_key, unseen, version_key
from pipeline.replay.pacing.engine import Target
from resources import EndpointResource, SpecResource
from tests.support.specs import demo_spec_dict, profile_file


def evaluate(spec_path: Path, cursor: str | None):
    resources = {"spec": SpecResource(spec_path=str(spec_path)), "endpoint": EndpointResource()}
    with build_sensor_context(cursor=cursor, resources=resources) as context:
        result = new_model_version(context)
        return result, context.cursor


def test_sensor_requests_one_run_per_new_version_and_none_for_a_seen_one(tmp_path, write_spec, monkeypatch):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    port = free_port()
    data = demo_spec_dict()
    data["candidates"][0]["base_url"] = f"http://127.0.0.1:{port}/v1"
    spec = write_spec(data)

    with ReferenceServer(profile_file(tmp_path, "2026-11-01"), port=port):
        first, cursor = evaluate(spec, None)
        again, cursor = evaluate(spec, cursor)
    assert isinstance(first, SensorResult) and len(first.run_requests) == 1
    (request,) = first.run_requests
    version = request.tags["loadproof/model_version"]
    assert version.startswith("2026-11-01+")
    # a partitioned run: the candidate × version partition is added along with the request
    assert request.partition_key.keys_by_dimension == {"candidate": "fastserve-8b", "model_version": version}
    added = {r.partitions_def_name: list(r.partition_keys) for r in first.dynamic_partitions_requests}
    assert added == {"candidates": ["fastserve-8b"], "model_versions": [version]}
    assert isinstance(again, SkipReason)

    with ReferenceServer(profile_file(tmp_path, "2026-12-01"), port=port):
        new, cursor = evaluate(spec, cursor)
        seen, cursor = evaluate(spec, cursor)
    assert len(new.run_requests) == 1 and new.run_requests[0].tags["loadproof/model_version"].startswith("2026-12-01+")
    assert new.run_requests[0].run_key != request.run_key
    assert isinstance(seen, SkipReason)

    # Same advertised version, different weights (seed): the probe replies change, so it is new.
    with ReferenceServer(profile_file(tmp_path, "2026-12-01", seed=7), port=port):
        silent, _ = evaluate(spec, cursor)
    assert len(silent.run_requests) == 1 and silent.run_requests[0].tags["loadproof/model_version"].startswith(
        "2026-12-01+"
    )
    assert silent.run_requests[0].partition_key != new.run_requests[0].partition_key


def test_an_unreachable_endpoint_is_skipped_not_fatal(write_spec, monkeypatch):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    data = demo_spec_dict()
    data["candidates"][0]["base_url"] = f"http://127.0.0.1:{free_port()}/v1"
    result, cursor = evaluate(write_spec(data), None)
    assert isinstance(result, SkipReason) and cursor == "{}"


def test_fingerprint_is_stable_for_the_same_endpoint(zero_server):
    target = Target("ref", zero_server.base_url, "reference-model")
    one, two = fingerprint(target), fingerprint(target)
    assert one["fingerprint_sha256"] == two["fingerprint_sha256"]
    assert version_key(one) == version_key(two) == f"{load_profile('zero').version}+{version_key(one).split('+')[1]}"
    assert legacy_version_key(one) is None  # it advertises a version: the old rule gave the same key
    assert all("created" not in entry for entry in one["models"])
    assert one["model_version"] == load_profile("zero").version
    assert len(one["probe_sha256"]) == 3 and one["headers"]["x-reference-profile"] == "zero"
    # the reference endpoint says nothing of its engine (no /props, /get_server_info, nor vLLM's
    # cache_config_info in its /metrics): no engine section, and the fingerprint stands
    assert one["engine"] is None and two["engine"] is None


def test_unseen_versions():
    assert unseen({"a": ["v1"]}, {"a": "v1", "b": "v1"}) == [("b", "v1")]
    assert unseen({"a": ["v1"]}, {"a": "v2"}) == [("a", "v2")]


def test_weekly_schedule_requests_one_partitioned_run_per_candidate_at_its_served_version(
    tmp_path, write_spec, monkeypatch
):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    port = free_port()
    data = demo_spec_dict()
    data["candidates"] = data["candidates"][:1]
    data["candidates"][0]["base_url"] = f"http://127.0.0.1:{port}/v1"
    resources = {"spec": SpecResource(spec_path=str(write_spec(data))), "endpoint": EndpointResource()}
    (tmp_path / "home").mkdir()
    with (
        DagsterInstance.local_temp(tempdir=str(tmp_path / "home")) as instance,
        ReferenceServer(profile_file(tmp_path, "2026-11-01"), port=port),
    ):
        monday = datetime(2026, 11, 30, 6, tzinfo=UTC)
        with build_schedule_context(instance=instance, resources=resources, scheduled_execution_time=monday) as context:
            (request,) = weekly_revalidation(context)
        version = request.partition_key.keys_by_dimension["model_version"]
        assert version.startswith("2026-11-01+") and request.run_key.startswith("weekly-2026-11-30-fastserve-8b@")
        assert instance.get_dynamic_partitions("model_versions") == [version]


def test_weekly_schedule_and_sensor_are_registered():
    schedule = defs.resolve_schedule_def("weekly_revalidation")
    assert (schedule.job_name, schedule.cron_schedule, schedule.execution_timezone) == (
        "revalidation",
        "0 6 * * 1",
        "UTC",
    )
    sensor = defs.resolve_sensor_def("new_model_version")
    assert (sensor.job_name, sensor.minimum_interval_seconds) == ("revalidation", 300)  # polls every 5 minutes
    assert sensor.default_status == DefaultSensorStatus.STOPPED  # turned on by hand in the UI, never by a deploy


def two_candidates_one_without_its_key(write_spec, port: int, monkeypatch) -> Path:
    """fastserve-8b's key variable is not set here; budget-8b's is, and it answers on `port`."""
    monkeypatch.delenv("LOADPROOF_TEST_UNSET_KEY", raising=False)
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "k")
    data = demo_spec_dict()
    data["candidates"][0]["api_key_env"] = "LOADPROOF_TEST_UNSET_KEY"
    data["candidates"][1]["base_url"] = f"http://127.0.0.1:{port}/v1"
    return write_spec(data)


def test_a_candidate_without_its_key_is_skipped_by_name_and_the_others_still_evaluated(
    tmp_path, write_spec, monkeypatch
):
    port = free_port()
    spec = two_candidates_one_without_its_key(write_spec, port, monkeypatch)
    with ReferenceServer(profile_file(tmp_path, "2026-11-01"), port=port):
        first, cursor = evaluate(spec, None)
        again, cursor = evaluate(spec, cursor)
    # the tick did not die on the missing key: budget-8b's new version is launched
    assert isinstance(first, SensorResult)
    assert [r.tags["loadproof/candidate"] for r in first.run_requests] == ["budget-8b"]
    assert list(json.loads(cursor)) == ["budget-8b"]  # the skipped one stays unseen: the next tick retries it
    # nothing new: the skip reason names the skipped candidate and the variable to set
    assert isinstance(again, SkipReason)
    assert "fastserve-8b skipped" in again.skip_message and "LOADPROOF_TEST_UNSET_KEY" in again.skip_message
    assert "['budget-8b']" in again.skip_message


def test_every_candidate_skipped_still_gives_a_skip_reason_naming_each(write_spec, monkeypatch):
    spec = two_candidates_one_without_its_key(write_spec, free_port(), monkeypatch)  # nothing listens there
    result, cursor = evaluate(spec, None)
    assert isinstance(result, SkipReason) and cursor == "{}"
    message = result.skip_message
    assert "fastserve-8b skipped: environment variable LOADPROOF_TEST_UNSET_KEY" in message
    assert "budget-8b skipped: endpoint not reachable (CandidateUnreachable" in message


def test_the_weekly_schedule_skips_a_candidate_without_its_key_and_runs_the_others(tmp_path, write_spec, monkeypatch):
    port = free_port()
    resources = {
        "spec": SpecResource(spec_path=str(two_candidates_one_without_its_key(write_spec, port, monkeypatch))),
        "endpoint": EndpointResource(),
    }
    (tmp_path / "home").mkdir()
    monday = datetime(2026, 11, 30, 6, tzinfo=UTC)
    with DagsterInstance.local_temp(tempdir=str(tmp_path / "home")) as instance:
        with build_schedule_context(instance=instance, resources=resources, scheduled_execution_time=monday) as context:
            nothing = weekly_revalidation(context)  # budget-8b is not up yet either
        with (
            ReferenceServer(profile_file(tmp_path, "2026-11-01"), port=port),
            build_schedule_context(instance=instance, resources=resources, scheduled_execution_time=monday) as context,
        ):
            (request,) = weekly_revalidation(context)
    assert isinstance(nothing, SkipReason) and "LOADPROOF_TEST_UNSET_KEY" in nothing.skip_message
    assert request.tags["loadproof/candidate"] == "budget-8b"


def test_the_launchpads_default_pack_folder_is_the_demos():
    assert Path(defs.resources["storage"].out_dir) == REPO_ROOT / "out" / "demo"  # beside the instance `make dev` opens
