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
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.replay.engine import Target
from pipeline.replay.preflight import CandidateUnreachable, check_reachable
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
    assert result.exit_code == 1
    assert "candidate 'fastserve-8b'" in result.output and url in result.output
    assert "ConnectError" in result.output and "refused" in result.output.lower()
    assert not (out / ".dagster").exists()  # no Dagster run was started, so no replay either


def test_a_refused_key_names_its_environment_variable_and_never_the_key(
    write_spec, tmp_path, monkeypatch, refusing_401
):
    monkeypatch.setenv(KEY_ENV, SECRET)
    result = run_cli(small_spec(write_spec, refusing_401), tmp_path / "pack")
    assert result.exit_code == 1
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
