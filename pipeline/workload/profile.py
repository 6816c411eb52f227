"""prompt_profile: the shape of a request set — lengths, structure, prefix reuse, arrivals,
burstiness and concurrency — computed with DuckDB from canonical Parquet.

The flat keys (prompt_tokens_p50, arrival_rate_per_s, ...) are those the pack and the checks
read; `histograms`, `arrival_rate`, `dispersion` are lists of rows. Each figure comes from the
sql/ file named in `queries`.
"""

from __future__ import annotations

import math
from pathlib import Path

from pipeline.duck import connect as duck
from pipeline.spec.workload import ProfileSettings

QUERIES = (
    "prompt_profile",
    "prompt_length_histogram",
    "arrival_rate",
    "arrival_dispersion",
    "logged_concurrency",
    "prefix_reuse",
    "session_profile",
)


def profile_requests(
    requests: Path, settings: ProfileSettings | None = None, memory_limit: str = duck.DEFAULT_MEMORY_LIMIT
) -> dict:
    """The profile of the canonical rows in the Parquet file `requests`."""
    settings = settings or ProfileSettings()
    widths = sorted({*settings.dispersion_bins_s, settings.rate_bin_s})
    with duck.connection(memory_limit) as con:
        con.read_parquet(str(requests)).create_view("requests")
        summary = _rows(duck.run(con, "prompt_profile", {"long_context_tokens": settings.long_context_tokens}))[0]
        histograms = _rows(duck.run(con, "prompt_length_histogram"))
        timeline = _rows(duck.run(con, "arrival_rate", {"bin_s": settings.rate_bin_s}))
        dispersion = _rows(duck.run(con, "arrival_dispersion", {"bins_s": widths}))
        concurrency = _rows(duck.run(con, "logged_concurrency"))[0]
        reuse = _rows(duck.run(con, "prefix_reuse"))[0]
        sessions = _rows(duck.run(con, "session_profile"))[0]
    at_rate_bin = next((row for row in dispersion if row["bin_s"] == settings.rate_bin_s), {})
    profile = {
        **summary,
        **concurrency,
        "prefix_requests_with_blocks": reuse["requests_with_blocks"],
        "prefix_block_reuse_share": reuse["block_reuse_share"],
        "prefix_share_requests_hit": reuse["share_requests_prefix_hit"],
        **sessions,
        "peak_to_mean_ratio": at_rate_bin.get("peak_to_mean"),
        "rate_bin_s": settings.rate_bin_s,
        "histograms": histograms,
        "arrival_rate": timeline,
        "dispersion": [row for row in dispersion if row["bin_s"] in settings.dispersion_bins_s],
        "queries": list(QUERIES),
    }
    return _finite(profile)


def _rows(relation) -> list[dict]:
    table = relation.to_arrow_table()
    return table.to_pylist()


def _finite(value):
    """NaN and infinities become None, so the JSON is valid and 'unknown' reads as such."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value
