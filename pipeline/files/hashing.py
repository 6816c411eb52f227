"""sha256 of files, and file references for lineage and manifests."""

from __future__ import annotations

import hashlib
from pathlib import Path

CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def file_ref(path: Path, root: Path, rows: int | None = None) -> dict:
    """{path relative to root, sha256, rows} — the lineage entry of one input file."""
    ref: dict[str, str | int] = {
        "path": path.resolve().relative_to(root.resolve()).as_posix(),
        "sha256": sha256_file(path),
    }
    if rows is not None:
        ref["rows"] = rows
    return ref
