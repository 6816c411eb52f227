"""`loadproof verify FOLDER` covers the whole folder: a byte flipped, a file deleted or added, a
manifest edited — in the top pack's own files or in a candidate × version sub-pack — fails the
verification and names the path (docs/contracts.md § 4.1).

Each test tampers with a copy of the session's demo pack (no whole-graph run of its own); the
copy leaves out the Dagster instance folder, the one exclusion, which one test adds back."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.files.hashing import sha256_file
from tests.support.demo_pack import DemoPack

pytestmark = pytest.mark.slow

CANDIDATE = "budget-8b"


def sub_pack(folder: Path) -> str:
    """The candidate's sub-pack, relative to the top folder: candidates/<candidate>/<version>."""
    latest = json.loads((folder / "candidates" / CANDIDATE / "latest.json").read_text())
    return f"candidates/{CANDIDATE}/{latest['model_version']}"


def first(folder: Path, pattern: str) -> str:
    return next(path for path in sorted(folder.glob(pattern))).relative_to(folder).as_posix()


def flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def edit_document(path: Path, edit: Callable[[dict], None]) -> None:
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document, indent=2) + "\n")


@pytest.fixture
def copy(demo_pack: DemoPack, tmp_path: Path) -> Path:
    folder = tmp_path / "pack"
    shutil.copytree(demo_pack.folder, folder, ignore=shutil.ignore_patterns(".dagster"))
    return folder


def verify(folder: Path):
    return CliRunner().invoke(app, ["verify", str(folder)])


def assert_fails_naming(folder: Path, *paths: str) -> None:
    result = verify(folder)
    assert result.exit_code == 1, result.output
    assert "NOT verified" in result.output
    for path in paths:
        assert f"FAIL {path}" in result.output, result.output


def test_the_untouched_copy_verifies_every_pack_in_it(copy: Path):
    (copy / ".dagster" / "history").mkdir(parents=True)  # the instance folder: the one exclusion
    (copy / ".dagster" / "history" / "runs.db").write_bytes(b"any bytes")
    result = verify(copy)
    assert result.exit_code == 0, result.output
    assert "verified: 3 packs" in result.output  # the top pack and both candidates' sub-packs
    document = json.loads((copy / "evidence_pack.json").read_text())
    subpacks = {entry["path"]: entry for entry in document["subpacks"]}
    assert sub_pack(copy) in subpacks
    for path, entry in subpacks.items():
        sub_document = json.loads((copy / path / "evidence_pack.json").read_text())
        assert entry["sha256"] == sha256_file(copy / path / "evidence_pack.json")
        assert entry["run_id"] == sub_document["run_id"]
        assert {e["path"] for e in sub_document["manifest"]} >= {"spec.yaml", "data/raw_timings.parquet"}
        assert any(e["path"].startswith("journal/") for e in sub_document["manifest"])
    listed = {entry["path"] for entry in document["manifest"]}
    assert f"candidates/{CANDIDATE}/latest.json" in listed
    assert any(path.startswith("journal/") for path in listed)
    assert not any(path.startswith(sub_pack(copy)) for path in listed)  # the sub-pack's own manifest has them


@pytest.mark.parametrize("where", ["top", "sub-pack"])
def test_a_flipped_byte_fails_and_is_named(copy: Path, where: str):
    targets = (
        [first(copy, "journal/*.jsonl"), f"candidates/{CANDIDATE}/latest.json"]
        if where == "top"
        else [f"{sub_pack(copy)}/data/itl_histogram.parquet", first(copy, f"{sub_pack(copy)}/journal/*.jsonl")]
    )
    for target in targets:
        flip_byte(copy / target)
    assert_fails_naming(copy, *targets)


@pytest.mark.parametrize("where", ["top", "sub-pack"])
def test_a_deleted_file_fails_and_is_named(copy: Path, where: str):
    target = first(copy, "journal/*.jsonl") if where == "top" else first(copy, f"{sub_pack(copy)}/journal/*.jsonl")
    (copy / target).unlink()
    assert_fails_naming(copy, target)


@pytest.mark.parametrize("where", ["top", "sub-pack"])
def test_an_added_file_fails_and_is_named(copy: Path, where: str):
    targets = (
        ["journal/extra.jsonl", "notes.txt"]
        if where == "top"
        # a .dagster folder is excluded only where the CLI keeps its instance: at the top
        else [f"{sub_pack(copy)}/data/extra.parquet", f"{sub_pack(copy)}/.dagster/runs.db"]
    )
    for target in targets:
        (copy / target).parent.mkdir(parents=True, exist_ok=True)
        (copy / target).write_bytes(b"not measured\n")
    assert_fails_naming(copy, *targets)


def test_an_added_or_removed_sub_pack_fails_and_is_named(copy: Path):
    added = f"candidates/{CANDIDATE}/2099-01-01+forged"
    shutil.copytree(copy / sub_pack(copy), copy / added)  # a complete, self-consistent pack
    assert_fails_naming(copy, f"{added}/evidence_pack.json")
    shutil.rmtree(copy / added)
    removed = sub_pack(copy)
    shutil.rmtree(copy / removed)
    assert_fails_naming(copy, f"{removed}/evidence_pack.json")


def test_an_edited_top_manifest_fails_and_names_the_path(copy: Path):
    journal = first(copy, "journal/*.jsonl")
    latest = f"candidates/{CANDIDATE}/latest.json"

    def drop_and_alter(document: dict) -> None:
        document["manifest"] = [entry for entry in document["manifest"] if entry["path"] != journal]
        for entry in document["manifest"]:
            if entry["path"] == latest:
                entry["sha256"] = "0" * 64
        for entry in document.get("subpacks", []):
            entry["sha256"] = "0" * 64

    edit_document(copy / "evidence_pack.json", drop_and_alter)
    assert_fails_naming(copy, journal, latest, f"{sub_pack(copy)}/evidence_pack.json")


def test_a_consistently_edited_sub_pack_manifest_fails_at_the_top(copy: Path):
    # the sub-pack's page reworded and its manifest updated to match: the sub-pack alone still
    # verifies, only the top manifest's hash of its evidence_pack.json shows the edit
    folder = copy / sub_pack(copy)
    page = folder / "evidence_pack.md"
    page.write_text(page.read_text().replace("not reproduced", "holds"))
    digest = sha256_file(page)

    def match(document: dict) -> None:
        for entry in document["manifest"]:
            if entry["path"] == "evidence_pack.md":
                entry["sha256"] = digest

    edit_document(folder / "evidence_pack.json", match)
    assert verify(folder).exit_code == 0  # the sub-pack on its own is self-consistent
    assert_fails_naming(copy, f"{sub_pack(copy)}/evidence_pack.json")


def test_a_pack_written_before_whole_folder_manifests_fails_and_says_why(copy: Path):
    # what the code before whole-folder manifests wrote: no `subpacks`, and a manifest without
    # journal/ and candidates/
    def as_before(document: dict) -> None:
        document.pop("subpacks", None)
        document["manifest"] = [
            entry for entry in document["manifest"] if not entry["path"].startswith(("journal/", "candidates/"))
        ]

    edit_document(copy / "evidence_pack.json", as_before)
    result = verify(copy)
    assert result.exit_code == 1, result.output
    assert "written before whole-folder manifests" in result.output
    assert result.output.count("FAIL") == 1  # its own files and figures still check out
    assert "figures re-computed" in result.output
