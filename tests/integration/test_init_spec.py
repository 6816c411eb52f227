"""`loadproof init LOG --target URL` against real endpoints on loopback (issue 27, item 5): the
reference endpoint's models list becomes the candidate and the spec loads as `loadproof run`
loads it; a URL that does not answer, a server that lists no model, an unreadable log and a log in
no known format each exit 2 with a message naming what is at fault and a hint. (The run on the
written spec: tests/e2e/test_init_then_run.py.)"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.spec import load_spec
from tests.support.specs import DEMO_LOG

SECRET = "sk-init-must-never-be-written"


class ListsNoModel(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = b'{"object": "list", "data": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture()
def empty_models_list() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ListsNoModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def refused_url() -> str:
    """A loopback port that was free a moment ago: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def init(*args: str):
    return CliRunner().invoke(app, ["init", *args])


def test_init_writes_a_spec_for_the_bundled_log_and_the_reference_endpoint_that_loads(zero_server, tmp_path):
    out = tmp_path / "spec.yaml"
    root_url = zero_server.base_url.removesuffix("/v1")  # /v1 is added
    result = init(str(DEMO_LOG), "--target", root_url, "--out", str(out), "--window-s", "10", "--max-requests", "30")
    assert result.exit_code == 0, result.output
    assert "openai_jsonl log, busiest 10 s" in result.output and "loadproof run" in result.output
    spec = load_spec(out).spec
    candidate = spec.candidates[0]
    assert (candidate.base_url, candidate.model, candidate.name) == (
        zero_server.base_url,
        "reference-model",
        "reference-model",
    )
    assert spec.workload.log.format == "openai_jsonl" and Path(spec.workload.log.path) == DEMO_LOG
    assert (spec.workload.sample.window_s, spec.workload.sample.max_requests) == (10, 30)
    assert spec.sla.e2e_ms is not None and spec.sla.ttft_ms is None  # the bundled log logs latency, not TTFT
    assert "the log's own latency: p95" in out.read_text()
    # the client processes for the window's peak in flight at the logged latencies: one holds 128
    assert spec.workload.replay.shards == 1 and re.search(
        r"shards: 1 +# the window's peak: \d+ requests", out.read_text()
    )


def test_a_named_key_is_read_from_its_variable_and_only_the_name_is_written(zero_server, tmp_path, monkeypatch):
    monkeypatch.setenv("INIT_TEST_KEY", SECRET)
    out = tmp_path / "spec.yaml"
    result = init(str(DEMO_LOG), "--target", zero_server.base_url, "--out", str(out), "--api-key-env", "INIT_TEST_KEY")
    assert result.exit_code == 0, result.output
    assert load_spec(out).spec.candidates[0].api_key_env == "INIT_TEST_KEY"
    assert SECRET not in out.read_text() and SECRET not in result.output


def test_a_url_that_does_not_answer_names_it_the_cause_and_a_hint(tmp_path):
    url = refused_url()
    result = init(str(DEMO_LOG), "--target", url, "--out", str(tmp_path / "spec.yaml"))
    assert result.exit_code == 2
    assert f"{url}/v1 cannot be reached" in result.output and "ConnectError" in result.output
    assert "hint: is the server running" in result.output
    assert not (tmp_path / "spec.yaml").exists()


def test_a_server_listing_no_model_is_an_error(empty_models_list, tmp_path):
    result = init(str(DEMO_LOG), "--target", empty_models_list, "--out", str(tmp_path / "spec.yaml"))
    assert result.exit_code == 2
    assert (
        f"GET {empty_models_list}/v1/models lists no model" in result.output and "hint: load a model" in result.output
    )


def test_a_missing_log_and_a_log_in_no_known_format_name_the_file(zero_server, tmp_path):
    missing = tmp_path / "nope.jsonl"
    result = init(str(missing), "--target", zero_server.base_url, "--out", str(tmp_path / "a.yaml"))
    assert result.exit_code == 2 and "production log not found" in result.output and "nope.jsonl" in result.output
    odd = tmp_path / "odd.txt"
    odd.write_text("hello\nworld\n")
    result = init(str(odd), "--target", zero_server.base_url, "--out", str(tmp_path / "b.yaml"))
    assert result.exit_code == 2
    assert "odd.txt: no log format the ingest knows reads its first 2 lines" in result.output
    assert "line 1: not valid JSON (openai_jsonl," in result.output and "hint:" in result.output
    assert not (tmp_path / "a.yaml").exists() and not (tmp_path / "b.yaml").exists()


def test_a_given_format_that_reads_no_line_names_the_first_rejected_line(zero_server, tmp_path):
    result = init(
        str(DEMO_LOG), "--target", zero_server.base_url, "--out", str(tmp_path / "spec.yaml"), "--format", "langfuse"
    )
    assert result.exit_code == 2
    assert f"{DEMO_LOG}:1: field startTime: missing" in result.output and "hint: check --format" in result.output
