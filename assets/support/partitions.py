"""Candidates × model versions as dynamic partitions: one re-validation per candidate per version.

The replay, analysis and per-candidate pack assets are partitioned by these; the log, sample,
profile and plan are not (every candidate is replayed with the same plan). A partition key is
added when a version is first seen: by the new-version sensor, the weekly schedule or the CLI.
"""

from __future__ import annotations

from dagster import (
    DagsterInstance,
    DynamicPartitionsDefinition,
    MultiPartitionKey,
    MultiPartitionsDefinition,
)

from pipeline.files.layout import PackLayout
from pipeline.files.partition_keys import partition_safe
from pipeline.spec import Spec
from pipeline.spec.candidates import Candidate
from resources import PackStorage

CANDIDATES = DynamicPartitionsDefinition(name="candidates")
MODEL_VERSIONS = DynamicPartitionsDefinition(name="model_versions")
REVALIDATION_PARTITIONS = MultiPartitionsDefinition({"candidate": CANDIDATES, "model_version": MODEL_VERSIONS})

# the tags Dagster sets on a run of one multi-partition key (automation.py sets its own, RUN_*_TAG)
PARTITION_CANDIDATE_TAG = "dagster/partition/candidate"
PARTITION_VERSION_TAG = "dagster/partition/model_version"


def partition_key(candidate: str, version: str) -> MultiPartitionKey:
    return MultiPartitionKey({"candidate": partition_safe(candidate), "model_version": partition_safe(version)})


def register(instance: DagsterInstance, candidate: str, version: str) -> MultiPartitionKey:
    """Add the candidate and version as dynamic partitions (idempotent); return the run's key."""
    key = partition_key(candidate, version)
    dimensions = key.keys_by_dimension
    for definition, value in ((CANDIDATES, dimensions["candidate"]), (MODEL_VERSIONS, dimensions["model_version"])):
        if not instance.has_dynamic_partition(definition.name, value):
            instance.add_dynamic_partitions(definition.name, [value])
    return key


def partition_of(context) -> tuple[str, str]:
    """(candidate, model version) of the running partition; works in assets and in checks."""
    tags = context.run.tags
    if PARTITION_CANDIDATE_TAG not in tags or PARTITION_VERSION_TAG not in tags:
        raise ValueError("this asset is partitioned by candidate × model_version: run it with a partition key")
    return tags[PARTITION_CANDIDATE_TAG], tags[PARTITION_VERSION_TAG]


def partition_candidate(context, spec: Spec) -> Candidate:
    """The spec's candidate this partition measures."""
    name, _ = partition_of(context)
    for candidate in spec.candidates:
        if partition_safe(candidate.name) == name:
            return candidate
    raise ValueError(
        f"partition candidate {name!r} is not in the spec (candidates: {[c.name for c in spec.candidates]})"
    )


def partition_layout(storage: PackStorage, context) -> PackLayout:
    """The running partition's pack folder, with the shared inputs it reads copied into it."""
    return storage.partition_layout(*partition_of(context))
