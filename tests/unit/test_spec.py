"""The spec file: the demo spec parses; a wrong field names the file, the line and the field."""

import re
from pathlib import Path

import pytest

from pipeline.spec import SpecError, load_spec
from tests.support.specs import DEMO_SPEC, demo_spec_dict


def test_demo_spec_parses_with_claim_candidate_workload_sla_price():
    loaded = load_spec(DEMO_SPEC)
    spec = loaded.spec
    assert spec.claim.figures["output_tokens_per_s"] == 4200
    assert spec.candidates[0].price.usd_per_hour == 4.5
    assert spec.workload.replay.mode == "trace"
    assert spec.sla.ttft_ms == 500
    assert len(loaded.sha256) == 64
    assert loaded.resolve(spec.workload.log.path).is_file()


def test_unknown_field_is_named_with_file_and_line(tmp_path: Path):
    text = re.sub(r"(?m)^(    window_s: .*)$", "\\1\n    windw_s: 30", DEMO_SPEC.read_text(), count=1)
    assert "    windw_s: 30" in text
    path = tmp_path / "typo.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    message = str(caught.value)
    line = text.splitlines().index("    windw_s: 30") + 1
    assert f"{path}:{line}: workload.sample.windw_s: Extra inputs are not permitted" in message


def test_wrong_type_names_the_field(write_spec):
    data = demo_spec_dict()
    data["candidates"][0]["price"]["replicas"] = "two"
    with pytest.raises(SpecError, match=r"candidates\.0\.price\.replicas: Input should be a valid integer"):
        load_spec(write_spec(data))


def test_unknown_claimed_figure_is_refused(write_spec):
    data = demo_spec_dict()
    data["claim"]["figures"]["tokens_per_second"] = 1
    with pytest.raises(SpecError, match=r"claim\.figures: .*unknown figure\(s\) \['tokens_per_second'\]"):
        load_spec(write_spec(data))


def test_price_needs_exactly_one_pricing(write_spec):
    data = demo_spec_dict()
    data["candidates"][0]["price"]["usd_per_million_output_tokens"] = 2.0
    with pytest.raises(SpecError, match=r"candidates\.0\.price: .*either usd_per_hour"):
        load_spec(write_spec(data))


def test_concurrency_mode_needs_concurrency(write_spec):
    data = demo_spec_dict()
    data["workload"]["replay"]["mode"] = "concurrency"
    data["workload"]["replay"].pop("sweep", None)  # the demo's sweep is bounded by schedule time
    with pytest.raises(SpecError, match=r"workload\.replay: .*mode concurrency needs concurrency"):
        load_spec(write_spec(data))


def test_missing_file_and_bad_yaml_are_clear(tmp_path: Path):
    with pytest.raises(SpecError, match="cannot read spec"):
        load_spec(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(bad)
