"""Unattended re-validation: a sensor for new model versions and a weekly schedule, both
launching one partitioned run per candidate × model version."""

import json

import httpx
from dagster import (
    AssetSelection,
    DefaultSensorStatus,
    RunRequest,
    ScheduleEvaluationContext,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    define_asset_job,
    schedule,
    sensor,
)

from assets.support.partitions import (
    CANDIDATES,
    MODEL_VERSIONS,
    partition_key,
    register,
)
from pipeline.replay.fingerprint import fingerprint, legacy_version_key, remember, version_key
from pipeline.replay.preflight import CandidateUnreachable
from resources import EndpointResource, SpecResource

REVALIDATION_JOB = "revalidation"
RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
WEEKLY_CRON = "0 6 * * 1"  # Mondays 06:00 UTC
POLL_INTERVAL_S = 300
# tags of the runs the sensor and schedule launch (Dagster adds its own partition tags)
RUN_CANDIDATE_TAG, RUN_VERSION_TAG = "loadproof/candidate", "loadproof/model_version"

revalidation_job = define_asset_job(
    REVALIDATION_JOB,
    selection=AssetSelection.all(),
    config=RUN_CONFIG,
    description=(
        "Ingest → sample → profile → plan → replay → analyse → evidence pack for one candidate × model version (a "
        "partition), then the side-by-side comparison, with every check."
    ),
)


def served_versions(
    spec: SpecResource, endpoint: EndpointResource, log, legacy: dict[str, str | None] | None = None
) -> dict[str, str]:
    """Candidate → the version key it serves now (advertised version + probe replies); `legacy`,
    where given, gets each candidate's key under the rule before issue 26 (a cursor from then)."""
    current = {}
    for candidate in spec.load().spec.candidates:
        try:
            document = fingerprint(endpoint.target(candidate))
        except (httpx.HTTPError, CandidateUnreachable) as exc:  # down, or its key refused: the next tick retries
            log.warning(f"{candidate.name}: endpoint not reachable ({type(exc).__name__}); will retry")
            continue
        current[candidate.name] = version_key(document)
        if legacy is not None:
            legacy[candidate.name] = legacy_version_key(document)
    return current


def run_request(candidate: str, version: str, run_key: str) -> RunRequest:
    return RunRequest(
        run_key=run_key,
        partition_key=partition_key(candidate, version),
        tags={RUN_CANDIDATE_TAG: candidate, RUN_VERSION_TAG: version},
    )


@schedule(
    job_name=REVALIDATION_JOB,
    cron_schedule=WEEKLY_CRON,
    execution_timezone="UTC",
    description="Re-validate every candidate weekly at the version it serves now, new model version or not.",
)
def weekly_revalidation(context: ScheduleEvaluationContext, spec: SpecResource, endpoint: EndpointResource):
    current = served_versions(spec, endpoint, context.log)
    if not current:
        return SkipReason("no candidate endpoint reachable")
    week = context.scheduled_execution_time.date().isoformat()
    requests = []
    for name, key in sorted(current.items()):
        register(context.instance, name, key)  # a schedule cannot return partition requests
        requests.append(run_request(name, key, f"weekly-{week}-{name}@{key}"))
    return requests


@sensor(
    job_name=REVALIDATION_JOB,
    minimum_interval_seconds=POLL_INTERVAL_S,
    default_status=DefaultSensorStatus.STOPPED,
    description=(
        "Polls each candidate's /v1/models and probe replies; launches one re-validation per version not seen before."
    ),
)
def new_model_version(context: SensorEvaluationContext, spec: SpecResource, endpoint: EndpointResource):
    seen: dict[str, list[str]] = json.loads(context.cursor) if context.cursor else {}
    legacy: dict[str, str | None] = {}
    current = served_versions(spec, endpoint, context.log, legacy)
    new = remember(seen, current, legacy)  # a version seen under its old key is not new
    context.update_cursor(json.dumps(seen, sort_keys=True))
    if not new:
        return SkipReason(f"no new model version among {sorted(seen)}")
    keys = [partition_key(name, key).keys_by_dimension for name, key in new]
    return SensorResult(
        run_requests=[run_request(name, key, f"{name}@{key}") for name, key in new],
        dynamic_partitions_requests=[
            CANDIDATES.build_add_request(sorted({k["candidate"] for k in keys})),
            MODEL_VERSIONS.build_add_request(sorted({k["model_version"] for k in keys})),
        ],
    )
