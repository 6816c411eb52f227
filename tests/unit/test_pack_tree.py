"""Which files a pack's manifest covers (`pipeline/pack/audit/tree.py`), on hand-built folders: the
whole-graph tamper tests are in tests/e2e/test_verify_tree.py."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.files.hashing import sha256_file
from pipeline.pack.audit.tree import covered_by, subpack_entry


def write(path: Path, text: str = "x") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_manifest_covers_every_file_but_the_sub_packs_and_the_instance(tmp_path: Path):
    for name in ("evidence_pack.json", "evidence_pack.md", "journal/run-calibration.jsonl", "data/a.parquet"):
        write(tmp_path / name)
    write(tmp_path / "candidates/c/latest.json")
    write(tmp_path / "candidates/c/v1/evidence_pack.json", json.dumps({"run_id": "r1", "subpacks": []}))
    write(tmp_path / "candidates/c/v1/journal/r1-c.jsonl")
    write(tmp_path / "candidates/c/v2/data/half-written.parquet.partial")  # no pack there: plain files
    write(tmp_path / ".dagster/history/runs.db")
    coverage = covered_by(tmp_path)
    assert coverage.subpacks == ["candidates/c/v1"]
    assert coverage.files == [
        "candidates/c/latest.json",
        "candidates/c/v2/data/half-written.parquet.partial",
        "data/a.parquet",
        "evidence_pack.md",
        "journal/run-calibration.jsonl",
    ]
    entry = subpack_entry(tmp_path, "candidates/c/v1")
    assert entry == {
        "path": "candidates/c/v1",
        "sha256": sha256_file(tmp_path / "candidates/c/v1/evidence_pack.json"),
        "run_id": "r1",
    }


def test_a_sub_pack_written_before_whole_folder_manifests_is_hashed_file_by_file(tmp_path: Path):
    # its own manifest left journal/ out: the parent's manifest must cover every byte of it
    write(tmp_path / "candidates/c/v0/evidence_pack.json", json.dumps({"run_id": "r0", "manifest": []}))
    write(tmp_path / "candidates/c/v0/journal/r0-c.jsonl")
    write(tmp_path / "candidates/c/v0/.dagster/x")  # only the pack folder's own .dagster is excluded
    coverage = covered_by(tmp_path)
    assert coverage.subpacks == []
    assert coverage.files == [
        "candidates/c/v0/.dagster/x",
        "candidates/c/v0/evidence_pack.json",
        "candidates/c/v0/journal/r0-c.jsonl",
    ]


def test_descending_into_a_sub_pack_covers_a_dagster_folder_there(tmp_path: Path):
    write(tmp_path / ".dagster/runs.db")
    assert covered_by(tmp_path).files == []
    assert covered_by(tmp_path, exclude_instance=False).files == [".dagster/runs.db"]
