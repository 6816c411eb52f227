"""Honest both ways (issue 42, item 6): on the reference endpoint's `demo` serving profile (a real
HTTP server with a serving model: queueing, batching, decode slow-down), one whole-graph run with the
default arm sizing (the vendor's arm in waves of the claim's concurrency). A claim set far better
than the profile can serve is *not reproduced*, at the production load and at the vendor's own
conditions; the same run judged against a claim set far worse than the profile (the figures
re-computed from the run's own analysis tables, as `loadproof verify` does) *holds* there, a tail
percentile wherever its interval's upper end is bounded (see TAILS). Every verdict comes from the
one place a verdict is made (`pipeline.analysis.judge.figures.judged`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.analysis.judge.figures_table import figures_from_table, figures_of_folder
from pipeline.analysis.statistics.stats import HOLDS, INCONCLUSIVE, NOT_REPRODUCED
from pipeline.cli import app
from pipeline.reference import ReferenceServer, load_profile
from pipeline.spec import Spec
from tests.support.specs import demo_spec_dict

pytestmark = pytest.mark.slow

LATENCY = ("ttft_ms_p95", "e2e_ms_p95", "tpot_ms_p50")
# the demo profile serves TTFT ~40 ms, E2E ~1-8 s, TPOT ~8-12 ms, ~1,000 output tokens/s at 64 in flight
FAR_BETTER = {"ttft_ms_p95": 1.0, "e2e_ms_p95": 20.0, "tpot_ms_p50": 0.5, "output_tokens_per_s": 1_000_000.0}
FAR_WORSE = {"ttft_ms_p95": 60_000.0, "e2e_ms_p95": 300_000.0, "tpot_ms_p50": 2_000.0, "output_tokens_per_s": 1.0}
# A tail percentile's upper end is open (beyond the sample) where the run's five send-time batches
# disagree too much for its requests (a p95 needs ~147 effective requests, n over the design effect):
# at the vendor's conditions the closed loop sends its requests in synchronised waves of 64, so a
# tail's values come in a few atoms (E2E p95 3,475 - 3,488 ms over 384 requests) and the batches
# disagree in how many fall at or below it; at the production load a machine busy with other work
# during one batch does the same (CI read TTFT p95, and once E2E p95, open there on two cores shared
# by four test workers; 396 requests at a design effect of ~1 on a quiet machine). A far-worse claim
# on a tail then reads inconclusive, never not reproduced; wherever its upper end is bounded it holds.
TAILS = {"ttft_ms_p95", "e2e_ms_p95"}
JUDGED = {  # where each claim is judged: a capacity claim never at the production load (served demand)
    "production_load": LATENCY,
    "vendor_conditions": (*LATENCY, "output_tokens_per_s"),
}


def spec_data(base_url: str, claims: dict[str, float]) -> dict:
    data = demo_spec_dict()
    data["candidates"] = data["candidates"][:1]
    data["candidates"][0]["base_url"] = base_url
    data["claim"]["figures"] = dict(claims)
    data["claim"]["conditions"].update(concurrency=64, input_tokens=256, output_tokens=64)
    data.pop("accuracy")
    data["sla"].pop("per_user")  # users at a tier are read from a sweep: none here
    replay = data["workload"]["replay"]  # the demo's own window (120 s): its default budget
    replay.update(max_duration_s=150)
    replay.pop("sweep")
    replay["arms"] = {"ladder": False}  # the default sizing: 1 + 6 waves of the claim's concurrency
    return data


def why(figures: list[dict]) -> dict[tuple[str, str], tuple]:
    """Each claimed figure's verdict with what decided it, for a failure's message: its decision
    rule (a machine too busy for a steady window reads "no steady window: …"), its measured value
    and its interval's upper end (None where open)."""
    return {
        (f["basis"], f["metric"]): (f["verdict"], f.get("decision_rule"), f.get("measured"), f.get("ci_high"))
        for f in figures
        if f.get("claimed") is not None
    }


def verdicts(figures: list[dict]) -> dict[tuple[str, str], str]:
    return {key: decided[0] for key, decided in why(figures).items()}


def test_far_better_claims_are_not_reproduced_and_far_worse_ones_hold(tmp_path: Path, write_spec, monkeypatch):
    monkeypatch.setenv("LOADPROOF_DEMO_API_KEY", "sk-loadproof-test-0123456789abcdef")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    profile = tmp_path / "demo_profile.yaml"
    profile.write_text(json.dumps(load_profile("demo").model_dump(mode="json") | {"faults": {"rates": {}}}))
    with ReferenceServer(str(profile)) as server:
        spec = write_spec(spec_data(server.base_url, FAR_BETTER))
        result = CliRunner().invoke(app, ["run", str(spec), "--out", str(tmp_path / "pack")])
    assert result.exit_code == 0, result.output
    pack = json.loads((tmp_path / "pack" / "evidence_pack.json").read_text())
    found = verdicts(pack["figures"])
    wanted = {(basis, metric) for basis, names in JUDGED.items() for metric in names}
    assert {key: found.get(key) for key in wanted} == dict.fromkeys(wanted, NOT_REPRODUCED), why(pack["figures"])

    # the same measurements judged against claims far worse than the profile: they hold, a tail
    # percentile wherever its upper end is bounded (see TAILS), and none is judged the wrong way
    (figures_file,) = (tmp_path / "pack" / "candidates").glob("*/*/data/figures.parquet")
    partition = figures_file.parent.parent
    worse = Spec.model_validate(spec_data(server.base_url, FAR_WORSE), context={"spec_dir": spec.parent})
    rejudged_figures = figures_from_table(figures_of_folder(partition, worse))
    decided = why(rejudged_figures)
    expected = {
        key: INCONCLUSIVE if key[1] in TAILS and decided.get(key, (None,) * 4)[3] is None else HOLDS for key in wanted
    }
    assert {key: decided.get(key, (None,))[0] for key in wanted} == expected, decided
