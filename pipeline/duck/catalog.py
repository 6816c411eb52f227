"""Where a query's text comes from: the repository's sql/ or, first, an evidence pack's own copy."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from pipeline import REPO_ROOT

SQL_DIR = REPO_ROOT / "sql"


@dataclass(frozen=True)
class QueryCatalog:
    """The folders a query `name` (the file `<name>.sql`) is looked up in, in order."""

    folders: tuple[Path, ...]

    def preferring(self, folder: Path) -> QueryCatalog:
        """This catalogue with `folder` searched first (e.g. the SQL copied into a pack)."""
        return QueryCatalog((folder, *self.folders))

    def path(self, name: str) -> Path:
        for folder in self.folders:
            path = folder / f"{name}.sql"
            if path.is_file():
                return path
        raise FileNotFoundError(f"no query {name!r} in {', '.join(map(str, self.folders))}")

    def text(self, name: str) -> str:
        return self.path(name).read_text(encoding="utf-8")

    def sha256(self, name: str) -> str:
        return hashlib.sha256(self.path(name).read_bytes()).hexdigest()

    def reads(self, name: str, other: str) -> bool:
        """Whether query `name` reads `other` (a staged table or view named in its text): a pack's
        own older copy of a query may read less than the repository's."""
        return re.search(rf"\b{re.escape(other)}\b", self.text(name)) is not None

    def bound(self, name: str, params: dict | None) -> tuple[str, dict]:
        """The query's text and the subset of `params` it names (`$key`)."""
        text = self.text(name)
        return text, {key: value for key, value in (params or {}).items() if f"${key}" in text}


REPO_QUERIES = QueryCatalog((SQL_DIR,))
