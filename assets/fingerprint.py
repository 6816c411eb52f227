"""endpoint_fingerprint: what the partition's candidate endpoint is, recorded before it is measured."""

import json

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from assets.partitions import REVALIDATION_PARTITIONS, partition_candidate, partition_of
from pipeline.pack.layout import write_text
from pipeline.pack.partition_keys import partition_safe
from pipeline.replay.fingerprint import fingerprint, version_key
from resources import EndpointResource, PackStorage, SpecResource


@asset(
    group_name="replay",
    partitions_def=REVALIDATION_PARTITIONS,
    description="The partition's candidate: models list, server headers, system_fingerprint, probe-reply hashes.",
)
def endpoint_fingerprint(
    context: AssetExecutionContext, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
) -> MaterializeResult:
    document = fingerprint(endpoint.target(partition_candidate(context, spec.load().spec)))
    document["version_key"] = version_key(document)
    path = write_text(json.dumps([document], indent=2), storage.partition_layout(context).json("endpoint_fingerprint"))
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(str(path)),
            "model_version": document["model_version"],
            "version_key": document["version_key"],
            "fingerprint_sha256": document["fingerprint_sha256"],
            "run_id": context.run_id,
        }
    )


@asset_check(asset=endpoint_fingerprint, description="The candidate lists the model it is asked to serve.")
def endpoint_fingerprint_model_listed(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    documents = json.loads(storage.partition_layout(context).json("endpoint_fingerprint").read_text())
    absent = [d["candidate"] for d in documents if d["model_version"] == "absent"]
    return AssetCheckResult(passed=not absent, metadata={"candidates_without_their_model": ", ".join(absent) or "none"})


@asset_check(
    asset=endpoint_fingerprint,
    blocking=True,
    description="The endpoint still serves the model version this partition is about (else its figures would be filed under the wrong version).",
)
def endpoint_fingerprint_matches_partition(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    (document,) = json.loads(storage.partition_layout(context).json("endpoint_fingerprint").read_text())
    _, version = partition_of(context)
    return AssetCheckResult(
        passed=partition_safe(document["version_key"]) == version,
        metadata={"partition_model_version": version, "served_version_key": document["version_key"]},
    )
