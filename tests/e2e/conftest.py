"""The one demo-sized pack the whole-graph tests share, built once per session.

Whole-graph runs are the suite's slowest tests (each ~40-100 s on 2 cores), so a test that only
needs "a full demo-like run" reads this pack (tests/support/demo_pack.py says what is in it)
instead of running the graph itself. Tests that keep a run of their own need a different spec
or run, and say why where they do it:
- test_accuracy_mixed: `accuracy.mode: mixed` (the labelled items ride in the load replay);
- test_plan_and_divergence: a length-only Azure CSV trace (synthetic prompts);
- test_shards: `replay.shards: 2` on Dagster's multiprocess executor, and on a Dask cluster;
- test_repeats: `replay.repeats: 3` (the production replay three times in a row);
- test_reliability_kills: a run killed mid-replay, then re-run into the same folder;
- test_definitions: a blocking check that fails on the first asset (the run stops there);
- test_init_then_run: the spec `loadproof init` writes, run as written (its own window and candidate);
- test_docs_commands: the docs' quick start, every command as written (`init` on the bundled log with
  a 10 s window, `run`, then the task pages' commands on its pack);
- test_partitions: continues from a copy of this pack with a second model version;
- test_privacy_canary: a log and a slice with canaries planted, run under the default and `keep`.

Under pytest-xdist (`make test`) the pack is still built once per run, not once per worker: it is
built into the run's base temp folder, which every worker's own temp folder sits in, by whichever
worker needs it first (tests/support/demo_pack.py, `shared_demo_pack`).
"""

from __future__ import annotations

import pytest

from tests.support.demo_pack import DemoPack, run_temp_root, shared_demo_pack


@pytest.fixture(scope="session")
def demo_pack(tmp_path_factory) -> DemoPack:
    pack = shared_demo_pack(run_temp_root(tmp_path_factory) / "demo-pack")
    assert pack.exit_code == 0, pack.output
    return pack
