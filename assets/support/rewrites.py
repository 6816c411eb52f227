"""Which Dagster run wrote a pack file that no longer has its manifest's sha256 (`loadproof verify`).

Re-materialising an asset on the same inputs writes the same bytes (the pinned Parquet writer, the
input run's id, order-independent sums), so a file that differs from its manifest was re-made
from inputs that changed, or edited outside any run. Every asset's materialisation records the
path and sha256 of what it wrote (`assets/support/metadata.py`); the run whose record holds the
file's current bytes is the one that rewrote it. The instance is the pack's own (`<pack>/.dagster`,
what the CLI writes) or `DAGSTER_HOME`'s; without either, nothing is named."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from dagster import DagsterInstance, PathMetadataValue

from pipeline.files.hashing import sha256_file
from pipeline.pack.audit.tree import INSTANCE_DIR


@dataclass(frozen=True)
class Write:
    """One file an asset's materialisation recorded: where (as written), its sha256, by whom."""

    path: str
    sha256: str
    run_id: str
    asset: str
    partition: str | None
    timestamp: float


def recorded_writes(instance: DagsterInstance) -> list[Write]:
    """Every file any materialisation in `instance` recorded with its sha256 (`path` + `sha256`,
    or a page's `<name>` + `<name>_sha256`), newest first."""
    writes = []
    for key in instance.get_asset_keys():
        for record in instance.fetch_materializations(key, limit=1000).records:
            materialization = record.asset_materialization
            if materialization is None:
                continue
            metadata = materialization.metadata
            for name, value in metadata.items():
                digest = metadata.get("sha256" if name == "path" else f"{name}_sha256")
                if isinstance(value, PathMetadataValue) and digest is not None:
                    writes.append(
                        Write(
                            str(value.value),
                            str(digest.value),
                            record.run_id,
                            key.to_user_string(),
                            materialization.partition,
                            record.timestamp,
                        )
                    )
    return sorted(writes, key=lambda write: write.timestamp, reverse=True)


def rewriting_runs(pack_dir: Path, paths: list[str]) -> dict[str, str]:
    """For each of `paths` (relative to `pack_dir`), in words: the Dagster run that wrote its bytes
    (asset, partition, when), or that no recorded run did (edited outside Dagster, with the last
    recorded write of that path). Empty when no instance is at hand."""
    home = Path(pack_dir) / INSTANCE_DIR
    if home.is_dir():
        instance = DagsterInstance.local_temp(tempdir=str(home), overrides={"telemetry": {"enabled": False}})
    elif os.environ.get("DAGSTER_HOME"):
        instance = DagsterInstance.get()
    else:
        return {}
    with instance:
        writes = recorded_writes(instance)
    said = {}
    for relative in paths:
        file = Path(pack_dir) / relative
        if not file.is_file():
            continue
        digest = sha256_file(file)
        # matched by the path's end: a pack folder copied elsewhere keeps its instance's records
        of_path = [write for write in writes if Path(write.path).as_posix().endswith(f"/{relative}")]
        wrote = next((write for write in of_path if write.sha256 == digest), None)
        if wrote is not None:
            said[relative] = f"rewritten by Dagster run {wrote.run_id} ({_what(wrote)})"
        elif of_path:
            said[relative] = (
                f"written by no run recorded in {home if home.is_dir() else 'DAGSTER_HOME'}: edited outside "
                f"Dagster (its last recorded write: run {of_path[0].run_id}, {_what(of_path[0])})"
            )
    return said


def _what(write: Write) -> str:
    when = datetime.fromtimestamp(write.timestamp, UTC).isoformat(timespec="seconds")
    partition = f", partition {write.partition}" if write.partition else ""
    return f"asset {write.asset}{partition}, at {when}"
