"""`loadproof verify`'s part for the endpoint's own view (`pipeline/analysis/endpoint_view/endpoint_views.py`):
each table re-made from the raw timings and server metrics with the pack's own queries and compared
row by row with the file, and each of the pack's sections with the file's rows (the top pack's
document is hashed by nothing above it, so an edited section is caught only here). A pack written
before these tables has none to compare."""

from __future__ import annotations

from pathlib import Path

from pipeline.analysis.endpoint_view.endpoint_views import ENDPOINT_VIEWS, KEYS, endpoint_views, read_views
from pipeline.analysis.judge.figures_table import same_value
from pipeline.duck.catalog import QueryCatalog
from pipeline.files.layout import PackLayout

# the pack's section each table is shown in
SECTIONS = {
    "token_agreement": "token_agreement",
    "prefix_cache_hits": "prefix_cache",
    "server_timings": "server_timings",
    "server_ttft": "server_ttft",
    "server_levels": "server_levels",
    "gpu_energy": "gpu_energy",
}


def recompute_views(pack: dict, pack_dir: Path, spec, throughput_rows: list[dict], queries: QueryCatalog) -> list[str]:
    """The problems found (each naming the file or section, the row and the column)."""
    layout = PackLayout(pack_dir)
    if not all(layout.path(file).is_file() for file in ENDPOINT_VIEWS):
        return []
    written = read_views(layout)
    fresh = endpoint_views(pack_dir, spec, throughput_rows, queries)
    problems = []
    for file in ENDPOINT_VIEWS:
        problems += _differences(file.path, KEYS[file.name], written[file.name], fresh[file.name])
        section = pack.get(SECTIONS[file.name]) or []
        problems += _differences(SECTIONS[file.name], KEYS[file.name], section, written[file.name], shown_only=True)
    return problems


def _differences(where: str, key: tuple[str, ...], rows: list[dict], again: list[dict], shown_only=False) -> list[str]:
    """`rows` against `again`, paired by `key`; `shown_only`: only the columns `rows` has (a pack
    section shows some of a table's columns, and may add its own)."""
    mine = {tuple(row.get(k) for k in key): row for row in rows}
    theirs = {tuple(row.get(k) for k in key): row for row in again}
    if set(mine) != set(theirs):
        return [f"{where}: rows {sorted(map(str, mine))}, re-computed {sorted(map(str, theirs))}"]
    problems = []
    for identity, row in mine.items():
        other = theirs[identity]
        columns = [c for c in row if c in other] if shown_only else sorted(set(row) | set(other))
        problems += [
            f"{where} {'/'.join(map(str, identity))}: {column} {row.get(column)!r}, re-computed {other.get(column)!r}"
            for column in columns
            if not same_value(row.get(column), other.get(column))
        ]
    return problems
