"""Unattended re-validation: a sensor for new model versions and a weekly schedule, both
launching one partitioned run per candidate × model version."""

import json
from dataclasses import dataclass

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
from pipeline.replay.endpoint.fingerprint import fingerprint, legacy_version_key, remember, version_key
from resources import EndpointResource, SpecResource
from resources.endpoint import MissingApiKey

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


@dataclass(frozen=True)
class ServedVersions:
    """One poll of every candidate: the version key each one that answered serves now, and why
    each other one was skipped (the next tick tries it again)."""

    keys: dict[str, str]
    skipped: dict[str, str]

    def skipped_note(self) -> str:
        return "; ".join(f"{name} skipped: {why}" for name, why in sorted(self.skipped.items()))


def served_versions(
    spec: SpecResource, endpoint: EndpointResource, log, legacy: dict[str, str | None] | None = None
) -> ServedVersions:
    """Candidate → the version key it serves now (advertised version + probe replies); a candidate
    that cannot be probed (its key not set, refused, the endpoint down or answering garbage) is
    skipped, named with the reason, and never stops the others. `legacy`, where given, gets each
    candidate's key under the rule before issue 26 (a cursor from then)."""
    current, skipped = {}, {}
    for candidate in spec.load().spec.candidates:
        try:
            document = fingerprint(endpoint.target(candidate))
        except MissingApiKey as exc:
            skipped[candidate.name] = (
                f"environment variable {exc.variable} (its api_key_env) is not set where the sensor runs: "
                "set it for the Dagster daemon and code server"
            )
        except (httpx.HTTPError, ValueError) as exc:  # down, its key refused (CandidateUnreachable), not JSON
            skipped[candidate.name] = f"endpoint not reachable ({type(exc).__name__}: {exc})"
        else:
            current[candidate.name] = version_key(document)
            if legacy is not None:
                legacy[candidate.name] = legacy_version_key(document)
    for name, why in sorted(skipped.items()):
        log.warning(f"{name} skipped: {why}; the next tick tries it again")
    return ServedVersions(current, skipped)


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
    polled = served_versions(spec, endpoint, context.log)
    if not polled.keys:
        return SkipReason(f"no candidate endpoint reachable: {polled.skipped_note()}")
    week = context.scheduled_execution_time.date().isoformat()
    requests = []
    for name, key in sorted(polled.keys.items()):
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
    polled = served_versions(spec, endpoint, context.log, legacy)
    new = remember(seen, polled.keys, legacy)  # a version seen under its old key is not new
    context.update_cursor(json.dumps(seen, sort_keys=True))
    if not new:
        skipped = f"; {polled.skipped_note()}" if polled.skipped else ""
        return SkipReason(f"no new model version among {sorted(polled.keys)}{skipped}")
    keys = [partition_key(name, key).keys_by_dimension for name, key in new]
    return SensorResult(
        run_requests=[run_request(name, key, f"{name}@{key}") for name, key in new],
        dynamic_partitions_requests=[
            CANDIDATES.build_add_request(sorted({k["candidate"] for k in keys})),
            MODEL_VERSIONS.build_add_request(sorted({k["model_version"] for k in keys})),
        ],
    )
