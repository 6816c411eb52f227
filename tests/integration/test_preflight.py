"""A candidate that cannot be replayed against fails before any run, in words that name it
(issue 19, item 6): its name, its URL and the cause; for a refused key, the environment variable
that held it, never the key. Real loopback: a port nobody listens on, a tiny server answering 401."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.preflight import preflight, requests_needed
from pipeline.replay.endpoint.reachability import CandidateUnreachable, check_reachable
from pipeline.replay.pacing.engine import Target
from pipeline.spec import field_line, load_spec
from tests.support.specs import small_spec

KEY_ENV = "LOADPROOF_DEMO_API_KEY"  # the variable the demo spec's candidates name
SECRET = "sk-preflight-must-never-be-printed"


def refused_port() -> int:
    """A loopback port that was free a moment ago: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Refuses(BaseHTTPRequestHandler):
    status = 401

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = b'{"error": {"message": "invalid api key"}}'
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class Forbids(Refuses):
    status = 403


def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def refusing_401() -> Iterator[str]:
    yield from serving(Refuses)


@pytest.fixture()
def refusing_403() -> Iterator[str]:
    yield from serving(Forbids)


def run_cli(spec: Path, out: Path):
    return CliRunner().invoke(app, ["run", str(spec), "--out", str(out)])


def test_an_unreachable_candidate_fails_before_any_run_naming_itself_its_url_and_the_cause(
    write_spec, tmp_path, monkeypatch
):
    monkeypatch.setenv(KEY_ENV, SECRET)
    url = f"http://127.0.0.1:{refused_port()}/v1"
    spec = small_spec(write_spec, url)
    out = tmp_path / "pack"
    result = run_cli(spec, out)
    assert result.exit_code == 2  # bad input: before anything runs (README, "Exit statuses")
    assert "candidate 'fastserve-8b'" in result.output and url in result.output
    assert "ConnectError" in result.output and "refused" in result.output.lower()
    assert not out.exists() and not out.with_name(out.name + ".private").exists()  # no Dagster run, no folder


def test_a_refused_key_names_its_environment_variable_and_never_the_key(
    write_spec, tmp_path, monkeypatch, refusing_401
):
    monkeypatch.setenv(KEY_ENV, SECRET)
    result = run_cli(small_spec(write_spec, refusing_401), tmp_path / "pack")
    assert result.exit_code == 2
    assert "candidate 'fastserve-8b'" in result.output and refusing_401 in result.output
    assert f"the key in the environment variable {KEY_ENV} was refused" in result.output
    assert "HTTP 401" in result.output
    assert SECRET not in result.output


def test_a_403_without_a_key_says_the_spec_names_none(refusing_403):
    target = Target(candidate="keyless", base_url=refusing_403, model="m")
    with pytest.raises(CandidateUnreachable, match=r"'keyless' at .* HTTP 403: it wants an API key"):
        check_reachable(target)


def test_a_reachable_candidate_passes(zero_server):
    check_reachable(Target(candidate="zero", base_url=zero_server.base_url, model="reference-model"))


# The whole spec's preflight (issue 43, item 2): bad input exits 2 with one line naming the spec's
# file, line and field and a hint, before Dagster starts, and leaves no folder behind.


class AlwaysFails(Refuses):
    status = 500


@pytest.fixture()
def failing_500() -> Iterator[str]:
    yield from serving(AlwaysFails)


def refused_in_one_line(result, out: Path) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "hint:" in lines[0]
    assert not out.exists() and not out.with_name(out.name + ".private").exists()
    return lines[0]


def test_a_missing_log_is_refused_with_its_line_and_field(write_spec, tmp_path, monkeypatch, zero_server):
    monkeypatch.setenv(KEY_ENV, SECRET)
    spec = small_spec(write_spec, zero_server.base_url)
    data = yaml.safe_load(spec.read_text())
    data["workload"]["log"]["path"] = str(tmp_path / "absent.jsonl")
    spec = write_spec(data)
    out = tmp_path / "pack"
    line = refused_in_one_line(run_cli(spec, out), out)
    assert f"{spec}:{field_line(spec, ('workload', 'log', 'path'))}: workload.log.path: no file matches" in line
    assert "absent.jsonl" in line


def test_a_sweep_without_an_sla_bound_is_refused_not_computed(write_spec, tmp_path, monkeypatch, zero_server):
    monkeypatch.setenv(KEY_ENV, SECRET)
    data = yaml.safe_load(small_spec(write_spec, zero_server.base_url).read_text())
    data["sla"] = {"min_attainment": 0.95}  # what init leaves when the log records no latency
    data["claim"]["figures"] = {"ttft_ms_p50": 100}
    spec, out = write_spec(data), tmp_path / "pack"
    line = refused_in_one_line(run_cli(spec, out), out)
    assert f"{spec}:{field_line(spec, ('workload', 'replay', 'sweep'))}: workload.replay.sweep:" in line
    assert "sla.ttft_ms" in line and "remove the sweep" in line


def test_a_claimed_goodput_without_an_sla_bound_is_refused(write_spec, tmp_path, monkeypatch, zero_server):
    monkeypatch.setenv(KEY_ENV, SECRET)
    data = yaml.safe_load(small_spec(write_spec, zero_server.base_url).read_text())
    data["sla"] = {}
    del data["workload"]["replay"]["sweep"]
    data["claim"]["figures"] = {"goodput_requests_per_s": 5}
    spec, out = write_spec(data), tmp_path / "pack"
    line = refused_in_one_line(run_cli(spec, out), out)
    assert "claim.figures.goodput_requests_per_s: goodput_requests_per_s is read against the SLA's bounds" in line


def test_an_unset_key_variable_is_refused_naming_it(write_spec, tmp_path, monkeypatch, zero_server):
    monkeypatch.delenv(KEY_ENV, raising=False)
    spec, out = small_spec(write_spec, zero_server.base_url), tmp_path / "pack"
    line = refused_in_one_line(run_cli(spec, out), out)
    assert f"candidates[0].api_key_env: candidate 'fastserve-8b': the variable {KEY_ENV} is not set" in line


def test_a_candidate_that_keeps_answering_500_is_named_with_its_status(write_spec, tmp_path, monkeypatch, failing_500):
    monkeypatch.setenv(KEY_ENV, SECRET)
    spec, out = small_spec(write_spec, failing_500), tmp_path / "pack"
    line = refused_in_one_line(run_cli(spec, out), out)
    assert "candidates[0].base_url: candidate 'fastserve-8b'" in line
    assert "answered HTTP 500 Internal Server Error to GET /v1/models after 5 tries" in line


def test_a_percentile_the_budget_cannot_bound_is_a_warning_with_the_number_needed(write_spec, monkeypatch, zero_server):
    monkeypatch.setenv(KEY_ENV, SECRET)
    assert requests_needed(0.99, 0.95) == 368 and requests_needed(0.95, 0.95) == 72 and requests_needed(0.5, 0.95) == 6
    data = yaml.safe_load(small_spec(write_spec, zero_server.base_url).read_text())
    data["workload"]["sample"]["max_requests"] = 400
    loaded = load_spec(write_spec(data))  # 400 requests, 8 s window, 1 s + 1 s edges
    warnings = preflight(loaded)
    (p99,) = [w for w in warnings if "ttft_ms_p99" in w]
    assert "needs at least 368 requests" in p99 and "at most 400 (about 300 after warm-up and cool-down)" in p99
    assert not [w for w in warnings if "ttft_ms_p95" in w]  # 72 needed: the budget holds them
