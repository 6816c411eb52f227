"""Which files of a pack folder a pack's manifest covers: every file below it, as a hash tree.

A pack folder holds its own files (pages, spec, sql/, data/, journal/, candidates/<c>/latest.json)
and, below candidates/<c>/<v>/, sub-packs: complete packs with their own manifest. A pack's
`manifest` hashes every file of its folder that is not inside a sub-pack; its `subpacks` list
hashes each sub-pack's `evidence_pack.json`, which holds that sub-pack's manifest. So the top
document pins every byte below it, through one level of indirection, and a sub-pack stays a pack
that verifies on its own. The hash is of the sub-pack's whole document, not of a separate
manifest file: its figures, run id and lineage are pinned too, and there is no second file to
keep in step with it.

Beside the document, the folder's signature (`contracts.PACK_SIGNATURE`, `pack/audit/signing.py`) is
not listed either: it signs the document's sha256, the tree's root, so it is written after it.

The one folder excluded is the Dagster instance folder the CLI keeps inside a pack folder
(`.dagster`, `assets/runner.py` `instance_for`): its event log grows with every later run or
`dagster dev` session and is not evidence; the runs that wrote the packs are recorded in them
(`lineage`, and each `subpacks` entry's `run_id`).

A folder with an `evidence_pack.json` but no `subpacks` key was written before this rule (its
journal/ was in no manifest): it is not treated as a sub-pack, its files are hashed one by one
into the parent's manifest instead, so a later top pack still covers every byte of it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.contracts import PACK_SIGNATURE
from pipeline.files.hashing import sha256_file

JSON_NAME = "evidence_pack.json"
INSTANCE_DIR = ".dagster"  # the only folder no manifest covers
SUBPACKS_KEY = "subpacks"  # its presence marks a pack written with whole-folder manifests


@dataclass(frozen=True)
class Coverage:
    """What a pack folder's manifest must list (`files`) and which sub-packs it descends into
    (`subpacks`), every path relative to the pack folder, sorted."""

    files: list[str]
    subpacks: list[str]


def covered_by(pack_dir: Path, *, exclude_instance: bool = True) -> Coverage:
    """The files and sub-packs below `pack_dir` as they are now (its own evidence_pack.json and
    signature excluded, and its `.dagster` unless `exclude_instance` is False: `verify`, descending into a
    sub-pack, where no instance is ever kept, covers a `.dagster` there like any other file)."""
    pack_dir = Path(pack_dir)

    def _in_instance(path: Path) -> bool:
        return exclude_instance and path.relative_to(pack_dir).parts[0] == INSTANCE_DIR

    subpacks = sorted(
        document.parent.relative_to(pack_dir).as_posix()
        for document in pack_dir.rglob(JSON_NAME)
        if document.parent != pack_dir and not _in_instance(document) and _is_tree_pack(document)
    )
    # a sub-pack's own sub-packs are its business: keep the outermost ones
    subpacks = [path for path in subpacks if not any(path.startswith(f"{outer}/") for outer in subpacks)]
    files = sorted(
        relative
        for path in pack_dir.rglob("*")
        if path.is_file()
        and not _in_instance(path)
        and (relative := path.relative_to(pack_dir).as_posix()) not in (JSON_NAME, PACK_SIGNATURE)
        and not any(relative.startswith(f"{sub}/") for sub in subpacks)
    )
    return Coverage(files=files, subpacks=subpacks)


def subpack_entry(pack_dir: Path, subpack: str) -> dict[str, str]:
    """{path, sha256 of its evidence_pack.json, run_id of the run that wrote it}."""
    document = pack_dir / subpack / JSON_NAME
    return {
        "path": subpack,
        "sha256": sha256_file(document),
        "run_id": json.loads(document.read_text(encoding="utf-8"))["run_id"],
    }


def _is_tree_pack(document: Path) -> bool:
    try:
        return SUBPACKS_KEY in json.loads(document.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # unreadable: hashed as a plain file, verify names it if it changes
        return False
