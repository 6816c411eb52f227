"""The side-by-side pack's inputs: each candidate's latest measured version, gathered into one folder."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.contracts import ENDPOINT_FINGERPRINT, PARTITION_TABLES, REPLAY_SUMMARY, SWEEP_REPLAY
from pipeline.files.hashing import file_ref
from pipeline.files.layout import PackLayout, write_parquet, write_text
from pipeline.pack.render.pages import JSON_NAME

LATEST_NAME = "latest.json"
REPLAY_TOTALS = ("sent", "errors", "unsent", "retries", "peak_in_flight", "wall_s")


@dataclass(frozen=True)
class MeasuredVersion:
    candidate: str
    model_version: str
    run_id: str
    layout: PackLayout


def record_latest(shared: PackLayout, candidate: str, model_version: str, run_id: str) -> Path:
    """Point candidates/<candidate>/latest.json at the version whose pack was just written."""
    document = {"candidate": candidate, "model_version": model_version, "run_id": run_id}
    return write_text(json.dumps(document, indent=2), shared.candidate_dir(candidate) / LATEST_NAME)


def latest_versions(shared: PackLayout, candidates: list[str]) -> list[MeasuredVersion]:
    """Each candidate's latest measured version, in the spec's order; an error names the ones
    never measured (run their re-validation first)."""
    found, missing = [], []
    for name in candidates:
        pointer = shared.candidate_dir(name) / LATEST_NAME
        if not pointer.is_file():
            missing.append(name)
            continue
        document = json.loads(pointer.read_text(encoding="utf-8"))
        layout = shared.partition(name, document["model_version"])
        if not (layout.root / JSON_NAME).is_file():
            missing.append(name)
            continue
        found.append(MeasuredVersion(name, document["model_version"], document["run_id"], layout))
    if missing:
        raise ValueError(
            f"no evidence pack yet for candidate(s) {missing} under {shared.root / 'candidates'}: re-validate "
            "them first"
        )
    return found


def gather(shared: PackLayout, versions: list[MeasuredVersion]) -> None:
    """Concatenate the partitions' tables into the shared folder and merge their replay and sweep
    summaries there (the side-by-side pack then reads its inputs from that folder, as any pack)."""
    for file in PARTITION_TABLES:
        tables = [pq.read_table(v.layout.path(file)) for v in versions if v.layout.path(file).is_file()]
        if tables:
            write_parquet(pa.concat_tables(tables, promote_options="default"), shared.path(file))
        else:
            shared.path(file).unlink(missing_ok=True)
    fingerprints = [d for v in versions for d in json.loads(v.layout.path(ENDPOINT_FINGERPRINT).read_text())]
    write_text(json.dumps(fingerprints, indent=2), shared.path(ENDPOINT_FINGERPRINT))
    summaries = [json.loads(v.layout.path(REPLAY_SUMMARY).read_text()) for v in versions]
    merged = {key: value for key, value in summaries[0].items() if key not in {"candidates", *REPLAY_TOTALS}}
    merged["candidates"] = {name: stats for summary in summaries for name, stats in summary["candidates"].items()}
    for key in REPLAY_TOTALS:
        merged[key] = sum(stats.get(key, 0) for stats in merged["candidates"].values())
    write_text(json.dumps(merged, indent=2), shared.path(REPLAY_SUMMARY))
    sweeps = [
        json.loads(v.layout.path(SWEEP_REPLAY).read_text()) for v in versions if v.layout.path(SWEEP_REPLAY).is_file()
    ]
    if sweeps:
        sweep = {**sweeps[0], "candidates": {name: entry for s in sweeps for name, entry in s["candidates"].items()}}
        if any("search" in s for s in sweeps):  # a capacity search: how each candidate's ended
            sweep["search"] = {name: entry for s in sweeps for name, entry in s.get("search", {}).items()}
        write_text(json.dumps(sweep, indent=2), shared.path(SWEEP_REPLAY))
    else:
        shared.path(SWEEP_REPLAY).unlink(missing_ok=True)


def merged_from(shared: PackLayout, versions: list[MeasuredVersion]) -> list[dict]:
    """Each table `gather` wrote into the shared folder, named as the pack names it (path, sha256,
    rows), with the partition files it was concatenated from and the run that wrote each: where a
    row of the side-by-side pack's combined file came from."""
    out = []
    for file in PARTITION_TABLES:
        combined = shared.path(file)
        if not combined.is_file():
            continue
        parts = [
            {
                **file_ref(v.layout.path(file), shared.root, pq.read_metadata(v.layout.path(file)).num_rows),
                "candidate": v.candidate,
                "model_version": v.model_version,
                "run_id": v.run_id,
            }
            for v in versions
            if v.layout.path(file).is_file()
        ]
        out.append({**file_ref(combined, shared.root, pq.read_metadata(combined).num_rows), "merged_from": parts})
    return out


def partition_quality(versions: list[MeasuredVersion]) -> list[dict]:
    """Every check result recorded in each partition's pack, labelled with its partition; the
    shared inputs' checks once: where a pack borrowed them from the run that planned (it marks
    them `run_id`: every pack of a side-by-side run does), they keep that run and no partition."""
    rows: list[dict] = []
    borrowed: dict[tuple[str, str, str], dict] = {}
    for v in versions:
        pack = json.loads((v.layout.root / JSON_NAME).read_text(encoding="utf-8"))
        for row in pack.get("data_quality", []):
            if "run_id" in row:
                borrowed.setdefault((row["run_id"], row["asset"], row["check"]), row)
            else:
                rows.append({**row, "partition": f"{v.candidate}|{v.model_version}"})
    own_assets = {row["asset"] for row in rows}
    return rows + [row for row in borrowed.values() if row["asset"] not in own_assets]
