"""A module-scoped zero-delay reference endpoint and an HTTP client on it, for test modules
that change the server's state (e.g. its advertised version) and so want their own server.
Import both names into the test module to use them."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from pipeline.reference import ReferenceServer


@pytest.fixture(scope="module")
def server() -> Iterator[ReferenceServer]:
    with ReferenceServer("zero") as running:
        yield running


@pytest.fixture()
def client(server: ReferenceServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=10.0) as http:
        yield http
