"""Run the reference endpoint: in this process (`serve`) or as a managed subprocess
(`ReferenceServer`, for the demo and tests). It only ever listens on loopback."""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path

from pipeline.reference.managed_server import LOOPBACK_HOST, ManagedServer
from pipeline.reference.server import build_app
from pipeline.reference.serving_profile import load_oracle_config, load_profile


def check_loopback(host: str) -> str:
    """Return `host` if it is a loopback address (127.0.0.0/8, ::1, localhost); else ValueError."""
    if host.strip().lower() == "localhost":
        return host
    try:
        address = ipaddress.ip_address(host.strip().strip("[]"))
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise ValueError(
            f"refusing to listen on {host!r}: the reference endpoint binds only to loopback "
            "(127.0.0.0/8, ::1 or localhost)"
        )
    return host


def serve(
    host: str, port: int, profile: str, timeline_path: str | Path | None = None, oracle: str | None = None
) -> None:
    """Serve the reference endpoint with `profile` (a name or a YAML path) until interrupted;
    with `timeline_path`, append the server's own per-request timeline there (JSONL);
    `oracle` (a YAML file) adds or replaces the profile's accuracy oracle."""
    import uvicorn

    check_loopback(host)
    serving = load_profile(profile)
    if oracle:
        serving = serving.model_copy(update={"oracle": load_oracle_config(oracle)})
    app = build_app(serving, timeline_path=timeline_path)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=3
    )
    # Server.run, not uvicorn.run: after its clean stop uvicorn raises the signal it caught again, and
    # uvicorn.run would swallow the KeyboardInterrupt (exit 0); so Ctrl-C exits 130, SIGTERM 143
    uvicorn.Server(config).run()


class ReferenceServer(ManagedServer):
    """The reference endpoint in a subprocess on a free loopback port; a context manager.

    >>> with ReferenceServer("zero") as server:
    ...     httpx.get(f"{server.root_url}/health")
    """

    health_path = "/health"
    health_timeout_s = 1.0
    poll_interval_s = 0.05
    stop_grace_s = 5.0

    def __init__(
        self,
        profile: str = "zero",
        port: int | None = None,
        startup_timeout_s: float = 20.0,
        timeline_path: str | Path | None = None,
        oracle: str | Path | None = None,
    ) -> None:
        super().__init__(port, startup_timeout_s)
        self.profile = profile
        self.timeline_path = Path(timeline_path) if timeline_path else None
        self.oracle = oracle

    @property
    def label(self) -> str:
        return f"reference server (profile {self.profile!r})"

    def command(self) -> list[str]:
        command = [
            sys.executable,
            "-m",
            "pipeline.reference",
            "--host",
            LOOPBACK_HOST,
            "--port",
            str(self.port),
            "--profile",
            str(self.profile),
        ]
        if self.timeline_path is not None:
            command += ["--timeline", str(self.timeline_path)]
        if self.oracle:
            command += ["--oracle", str(self.oracle)]
        return command
