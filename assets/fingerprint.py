"""endpoint_fingerprint: what each candidate endpoint is, recorded before it is measured."""

import json

from dagster import AssetCheckResult, AssetExecutionContext, MaterializeResult, MetadataValue, asset, asset_check

from pipeline.fingerprint import fingerprint
from pipeline.layout import write_text
from resources import EndpointResource, PackStorage, SpecResource


@asset(group_name="replay", description="Per candidate: models list, server headers, system_fingerprint, probe-reply hashes.")
def endpoint_fingerprint(
    context: AssetExecutionContext, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
) -> MaterializeResult:
    documents = [fingerprint(endpoint.target(candidate)) for candidate in spec.load().spec.candidates]
    path = write_text(json.dumps(documents, indent=2), storage.layout().json("endpoint_fingerprint"))
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(str(path)),
            "versions": MetadataValue.json({d["candidate"]: d["model_version"] for d in documents}),
            "fingerprints": MetadataValue.json({d["candidate"]: d["fingerprint_sha256"] for d in documents}),
            "run_id": context.run_id,
        }
    )


@asset_check(asset=endpoint_fingerprint, description="Every candidate lists the model it is asked to serve.")
def endpoint_fingerprint_model_listed(storage: PackStorage) -> AssetCheckResult:
    documents = json.loads(storage.layout().json("endpoint_fingerprint").read_text())
    absent = [d["candidate"] for d in documents if d["model_version"] == "absent"]
    return AssetCheckResult(passed=not absent, metadata={"candidates_without_their_model": ", ".join(absent) or "none"})
