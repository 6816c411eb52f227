"""`loadproof fit-profile` measures a running engine over real HTTP and writes a serving profile the
reference endpoint serves; here the engine is the reference endpoint itself (the small-GPU
profile, which says nothing of its slots), and a server that cannot be reached is a clear error."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.reference import ReferenceServer
from pipeline.reference.managed_server import free_port
from pipeline.reference.serving_profile import load_profile


def test_fit_profile_writes_a_profile_the_reference_endpoint_serves(tmp_path: Path):
    out = tmp_path / "fitted.yaml"
    with ReferenceServer(profile="small-gpu") as engine:
        result = CliRunner().invoke(
            app, ["fit-profile", engine.base_url, "--model", "reference-model", "--out", str(out), "--slots", "4"]
        )
    assert result.exit_code == 0, result.output
    profile = load_profile(str(out))
    # the slots as given (the reference endpoint has no /props); a decode step and a prefill cost
    # measured from its replies; no prefix cache (the measurements avoid it)
    assert profile.max_running_seqs == 4 and profile.prefix_cache is False
    assert profile.decode_ms_per_token > 0 and profile.prefill_ms_per_token >= 0
    assert "prefill samples" in out.read_text().splitlines()[0]
    with ReferenceServer(profile=str(out)) as simulator:  # the fitted profile serves
        assert simulator.base_url.startswith("http://127.0.0.1:")


def test_an_engine_that_cannot_be_reached_is_named(tmp_path: Path):
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = CliRunner().invoke(app, ["fit-profile", url, "--model", "m", "--out", str(tmp_path / "p.yaml")])
    assert result.exit_code == 2
    assert "not reachable); pass the slots (--slots N)" in result.output
    assert not (tmp_path / "p.yaml").exists()
