"""Every command against the README's table of exit statuses ("Exit statuses"): bad input exits
2 with one line on stderr and leaves no folder behind (issue 43, item 2). Each case is the bad
input a user meets first: a path that is not there, a closed port, an unknown name. (1, a failed
run or a pack that differs, is held by tests/e2e/test_verify_tree.py and test_reliability_kills.py;
128 + N by tests/integration/test_signal_statuses.py.)"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.reference.llama_server import llama_available
from tests.support.specs import DEMO_LOG, small_spec

BAD_INPUT = 2
KEY_ENV = "LOADPROOF_DEMO_API_KEY"


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def missing_log_spec(write_spec, tmp_path: Path) -> Path:
    spec = small_spec(write_spec, closed_port_url())
    text = spec.read_text().replace(str(DEMO_LOG), str(tmp_path / "absent.jsonl"))
    spec.write_text(text)
    return spec


CASES = {
    "run: no spec file": lambda w, t: ["run", str(t / "absent.yaml"), "--out", str(t / "out")],
    "run: no log": lambda w, t: ["run", str(missing_log_spec(w, t)), "--out", str(t / "out")],
    "run: closed port": lambda w, t: ["run", str(small_spec(w, closed_port_url())), "--out", str(t / "out")],
    "init: no log": lambda w, t: [
        "init",
        str(t / "absent.jsonl"),
        "--target",
        closed_port_url(),
        "--out",
        str(t / "out.yaml"),
    ],
    "init: closed port": lambda w, t: [
        "init",
        str(DEMO_LOG),
        "--target",
        closed_port_url(),
        "--out",
        str(t / "out.yaml"),
    ],
    "verify: no folder": lambda w, t: ["verify", str(t / "out")],
    "sign: no folder": lambda w, t: ["sign", str(t / "out"), "--key", str(t / "absent.key")],
    "export: unknown format": lambda w, t: ["export", str(t), "--format", "br9", "--out", str(t / "out")],
    "export: no pack": lambda w, t: ["export", str(t / "absent"), "--format", "br0.2", "--out", str(t / "out")],
    "serve-reference: no profile": lambda w, t: ["serve-reference", "--profile", str(t / "absent.yaml")],
    "fit-profile: closed port": lambda w, t: [
        "fit-profile",
        closed_port_url(),
        "--model",
        "m",
        "--out",
        str(t / "out.yaml"),
    ],
    "anonymize: no log": lambda w, t: [
        "anonymize",
        str(t / "absent.jsonl"),
        "--format",
        "openai_jsonl",
        "--out",
        str(t / "out.jsonl"),
    ],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_exits_2_in_one_line_and_leaves_nothing(case, write_spec, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "exit-status-key")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    args = CASES[case](write_spec, tmp_path)
    before = set(tmp_path.iterdir())
    result = CliRunner().invoke(app, args)
    assert result.exit_code == BAD_INPUT, (case, result.output)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, (case, result.output)
    assert "Traceback" not in result.output
    assert set(tmp_path.iterdir()) == before, case  # no pack folder, no .private/ copy, no spec written


@pytest.mark.skipif(llama_available(), reason="llama-server installed: demo-real would run, not refuse")
def test_demo_real_without_its_engine_exits_2_in_one_line(tmp_path):
    result = CliRunner().invoke(app, ["demo-real", "--out", str(tmp_path / "out")])
    assert result.exit_code == BAD_INPUT and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
