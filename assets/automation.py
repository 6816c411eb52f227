"""Unattended re-validation: a sensor for new model versions and a weekly schedule."""

import json

import httpx
from dagster import (
    AssetSelection,
    DefaultSensorStatus,
    RunRequest,
    ScheduleDefinition,
    SensorEvaluationContext,
    SkipReason,
    define_asset_job,
    sensor,
)

from pipeline.fingerprint import fingerprint, unseen, version_key
from resources import EndpointResource, SpecResource

REVALIDATION_JOB = "revalidation"
RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
WEEKLY_CRON = "0 6 * * 1"  # Mondays 06:00 UTC
POLL_INTERVAL_S = 300

revalidation_job = define_asset_job(
    REVALIDATION_JOB,
    selection=AssetSelection.all(),
    config=RUN_CONFIG,
    description="Ingest → sample → profile → plan → replay → analyse → evidence pack, with every check.",
)

weekly_revalidation = ScheduleDefinition(
    name="weekly_revalidation",
    job_name=REVALIDATION_JOB,
    cron_schedule=WEEKLY_CRON,
    execution_timezone="UTC",
    description="Re-run the whole re-validation every week, new model version or not.",
)


@sensor(
    job_name=REVALIDATION_JOB,
    minimum_interval_seconds=POLL_INTERVAL_S,
    default_status=DefaultSensorStatus.STOPPED,
    description="Polls each candidate's /v1/models and probe replies; launches one re-validation per version not seen before.",
)
def new_model_version(context: SensorEvaluationContext, spec: SpecResource, endpoint: EndpointResource):
    seen: dict[str, list[str]] = json.loads(context.cursor) if context.cursor else {}
    current = {}
    for candidate in spec.load().spec.candidates:
        try:
            current[candidate.name] = version_key(fingerprint(endpoint.target(candidate)))
        except httpx.HTTPError as exc:
            context.log.warning(f"{candidate.name}: endpoint not reachable ({type(exc).__name__}); will retry")
    new = unseen(seen, current)
    for name, key in new:
        seen.setdefault(name, []).append(key)
    context.update_cursor(json.dumps(seen, sort_keys=True))
    if not new:
        return SkipReason(f"no new model version among {sorted(current)}")
    return [
        RunRequest(run_key=f"{name}@{key}", tags={"loadproof/candidate": name, "loadproof/model_version": key})
        for name, key in new
    ]
