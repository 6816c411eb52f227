"""The new-version sensor and the weekly schedule, against a reference endpoint whose version changes."""

from pathlib import Path

import yaml
from dagster import RunRequest, SkipReason, build_sensor_context

from assets.automation import new_model_version, weekly_revalidation
from pipeline.definitions import defs
from pipeline.fingerprint import fingerprint, unseen
from pipeline.reference import ReferenceServer, load_profile
from pipeline.reference.launch import free_port
from pipeline.replay.engine import Target
from resources import EndpointResource, SpecResource
from tests.conftest import demo_spec_dict


def profile_file(tmp_path: Path, version: str, seed: int = 0) -> str:
    data = load_profile("zero").model_dump()
    data.update(version=version, seed=seed)
    path = tmp_path / f"profile-{version}-{seed}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


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
    assert [type(r) for r in first] == [RunRequest]
    assert first[0].tags["loadproof/model_version"].startswith("2026-11-01+")
    assert isinstance(again, SkipReason)

    with ReferenceServer(profile_file(tmp_path, "2026-12-01"), port=port):
        new, cursor = evaluate(spec, cursor)
        seen, cursor = evaluate(spec, cursor)
    assert len(new) == 1 and new[0].tags["loadproof/model_version"].startswith("2026-12-01+")
    assert new[0].run_key != first[0].run_key
    assert isinstance(seen, SkipReason)

    # Same advertised version, different weights (seed): the probe replies change, so it is new.
    with ReferenceServer(profile_file(tmp_path, "2026-12-01", seed=7), port=port):
        silent, _ = evaluate(spec, cursor)
    assert len(silent) == 1 and silent[0].tags["loadproof/model_version"].startswith("2026-12-01+")


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
    assert one["model_version"] == load_profile("zero").version
    assert len(one["probe_sha256"]) == 3 and one["headers"]["x-reference-profile"] == "zero"


def test_unseen_versions():
    assert unseen({"a": ["v1"]}, {"a": "v1", "b": "v1"}) == [("b", "v1")]
    assert unseen({"a": ["v1"]}, {"a": "v2"}) == [("a", "v2")]


def test_weekly_schedule_and_sensor_are_registered():
    assert weekly_revalidation.cron_schedule == "0 6 * * 1"
    assert defs.resolve_schedule_def("weekly_revalidation").job_name == "revalidation"
    assert defs.resolve_sensor_def("new_model_version") is not None
