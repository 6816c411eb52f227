"""loadproof's own calls to a candidate outside the replay survive transient errors (issue 43,
item 3): a 429 is retried after its Retry-After (capped), a 5xx and a reset with doubling backoff,
five tries at most; what still fails is named in one line with the status it gave. A real
loopback server answers a scripted sequence; the waits are recorded, not slept."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.http_retry import ATTEMPTS, CandidateFailing, check_status, retrying_client


class Scripted(BaseHTTPRequestHandler):
    """Answers the server's `script` in order: a status (with `Retry-After` for (429, seconds))
    or "reset" (the connection reset before any byte); 200 once the script is spent."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        server = self.server
        server.requests += 1  # type: ignore[attr-defined]
        step = server.script.pop(0) if server.script else 200  # type: ignore[attr-defined]
        if step == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        status, retry_after = step if isinstance(step, tuple) else (step, None)
        body = b'{"data": []}'
        self.send_response(status)
        if retry_after is not None:
            self.send_header("Retry-After", retry_after)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture()
def scripted() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    server.script, server.requests = [], 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def get(server: ThreadingHTTPServer, script: list) -> tuple[int, list[float]]:
    server.script[:] = script  # type: ignore[attr-defined]
    waits: list[float] = []
    with retrying_client(5.0, {"sleep": waits.append}) as client:
        response = client.get(f"http://127.0.0.1:{server.server_address[1]}/v1/models")
    return response.status_code, waits


def test_a_429_waits_its_retry_after_and_5xx_and_resets_back_off(scripted):
    status, waits = get(scripted, [(429, "2"), 503, "reset", 500])
    assert status == 200 and scripted.requests == 5  # type: ignore[attr-defined]
    assert waits == [2.0, 0.5, 1.0, 2.0]  # Retry-After, then the backoff of retries 2, 3 and 4


def test_a_long_retry_after_is_capped(scripted):
    status, waits = get(scripted, [(429, "3600")])
    assert status == 200 and waits == [10.0]


def test_a_client_error_is_not_retried(scripted):
    status, waits = get(scripted, [404])
    assert status == 404 and waits == [] and scripted.requests == 1  # type: ignore[attr-defined]


def test_what_keeps_failing_is_named_in_one_line_with_its_status(scripted):
    status, waits = get(scripted, [500] * ATTEMPTS)
    assert status == 500 and len(waits) == ATTEMPTS - 1 and scripted.requests == ATTEMPTS  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{scripted.server_address[1]}/v1"
    with retrying_client(5.0, {"sleep": lambda s: None}) as client:
        scripted.script[:] = [500] * ATTEMPTS  # type: ignore[attr-defined]
        response = client.get(url + "/models")
    with pytest.raises(CandidateFailing) as raised:
        check_status(response, "flaky", url, "the models list")
    message = str(raised.value)
    assert "\n" not in message and "mozilla" not in message
    assert message.startswith(f"candidate 'flaky' at {url}: the models list (GET /v1/models) answered HTTP 500")
    assert f"after {ATTEMPTS} tries" in message


def test_a_reset_on_every_try_raises_after_the_last(scripted):
    import httpx

    scripted.script[:] = ["reset"] * ATTEMPTS  # type: ignore[attr-defined]
    waits: list[float] = []
    with retrying_client(5.0, {"sleep": waits.append}) as client, pytest.raises(httpx.TransportError):
        client.get(f"http://127.0.0.1:{scripted.server_address[1]}/v1/models")
    assert waits == [0.25, 0.5, 1.0, 2.0]
