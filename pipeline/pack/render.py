"""Render the pack model to evidence_pack.md and evidence_pack.json, with a sha256 manifest."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jinja2

from pipeline.hashing import sha256_file

JSON_NAME = "evidence_pack.json"
MARKDOWN_NAME = "evidence_pack.md"

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("pipeline.pack", "templates"),
    autoescape=False,  # Markdown; cells are escaped by the `cell` filter
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
)


def _num(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "—"
        magnitude = abs(value)
        if isinstance(value, int) or magnitude >= 1000:
            return f"{value:,.0f}"
        return f"{value:.3g}" if magnitude < 1 else f"{value:,.1f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


_ENV.filters["num"] = _num


def render_markdown(pack: dict) -> str:
    return _ENV.get_template("evidence_pack.md.j2").render(pack=pack)


def write_pack(pack_dir: Path, pack: dict) -> dict[str, Path]:
    """Write the Markdown, then the JSON whose manifest hashes every other file of the pack."""
    markdown = pack_dir / MARKDOWN_NAME
    markdown.write_text(render_markdown(pack), encoding="utf-8")
    pack["manifest"] = [
        {"path": path.relative_to(pack_dir).as_posix(), "sha256": sha256_file(path)}
        for path in sorted(pack_dir.rglob("*"))
        if path.is_file() and path.name != JSON_NAME and not _is_private(path, pack_dir)
    ]
    document = pack_dir / JSON_NAME
    document.write_text(json.dumps(pack, indent=2, default=str) + "\n", encoding="utf-8")
    return {"json": document, "markdown": markdown}


def _is_private(path: Path, pack_dir: Path) -> bool:
    """Working files that are not part of the pack (the Dagster instance, replay journals)."""
    first = path.relative_to(pack_dir).parts[0]
    return first.startswith(".") or first in {"dagster_home", "journal"}
