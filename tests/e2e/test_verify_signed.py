"""`loadproof sign FOLDER --key` and `loadproof verify FOLDER --public-key`: a signed demo pack
verifies with its key, and fails (naming why) with another key, without a signature, and after
any byte below the folder changed (docs/contracts.md § 4.1, pipeline/pack/audit/signing.py).

The session's demo pack is copied and signed once per run (signing verifies the folder first: a
whole re-computation), and each test takes its own copy of that signed folder (no whole-graph run
or signing of its own, but where the test signs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.contracts import PACK_SIGNATURE
from tests.support.demo_pack import DemoPack, built_once, run_temp_root

pytestmark = pytest.mark.slow

CANDIDATE = "budget-8b"


def loadproof(*args: str | Path):
    return CliRunner().invoke(app, [str(arg) for arg in args])


SIGNED = "signed.done"  # written once the shared copy is signed


@pytest.fixture(scope="session")
def signed_once(demo_pack: DemoPack, tmp_path_factory) -> Path:
    """The run's one signed copy of the demo pack, with the keys (signer, other) beside it."""

    def build(root: Path) -> None:
        for leftover in ("keys", "pack"):  # of a build that raised half-way
            shutil.rmtree(root / leftover, ignore_errors=True)
        for name in ("signer", "other"):
            assert loadproof("keygen", "--out", root / "keys" / name).exit_code == 0
        folder = root / "pack"
        shutil.copytree(demo_pack.folder, folder, ignore=shutil.ignore_patterns(".dagster"))
        result = loadproof("sign", folder, "--key", root / "keys" / "signer.key")
        assert result.exit_code == 0, result.output
        assert (folder / PACK_SIGNATURE).is_file()
        (root / SIGNED).touch()

    return built_once(run_temp_root(tmp_path_factory) / "signed-demo-pack", SIGNED, build).parent


@pytest.fixture
def keys(signed_once: Path) -> dict[str, Path]:
    return {
        f"{name}.{kind}": signed_once / "keys" / f"{name}.{kind}"
        for name in ("signer", "other")
        for kind in ("key", "pub")
    }


@pytest.fixture
def signed(signed_once: Path, tmp_path: Path) -> Path:
    """This test's own copy of the signed pack (a test may edit it)."""
    folder = tmp_path / "pack"
    shutil.copytree(signed_once / "pack", folder)
    return folder


def assert_fails_naming(folder: Path, public_key: Path, *reasons: str) -> None:
    result = loadproof("verify", folder, "--public-key", public_key)
    assert result.exit_code == 1, result.output
    assert "NOT verified" in result.output
    for reason in reasons:
        assert reason in result.output, result.output


def test_a_signed_pack_verifies_with_its_key_and_without_one(signed: Path, keys: dict[str, Path]):
    result = loadproof("verify", signed, "--public-key", keys["signer.pub"])
    assert result.exit_code == 0, result.output
    assert "verified: 3 packs" in result.output and "its root is signed by" in result.output
    assert loadproof("verify", signed).exit_code == 0  # the signature is the one file beside the document


def test_another_key_fails(signed: Path, keys: dict[str, Path]):
    assert_fails_naming(signed, keys["other.pub"], f"FAIL {PACK_SIGNATURE}: signed with another key")


def test_a_missing_signature_fails_when_a_key_is_given(signed: Path, keys: dict[str, Path]):
    (signed / PACK_SIGNATURE).unlink()
    assert_fails_naming(signed, keys["signer.pub"], f"FAIL {PACK_SIGNATURE}: no signature")


@pytest.mark.parametrize("where", ["top", "sub-pack"])
def test_any_flipped_byte_after_signing_fails(signed: Path, keys: dict[str, Path], where: str):
    latest = json.loads((signed / "candidates" / CANDIDATE / "latest.json").read_text())
    target = (
        "data/raw_timings.parquet"
        if where == "top"
        else f"candidates/{CANDIDATE}/{latest['model_version']}/data/raw_timings.parquet"
    )
    data = bytearray((signed / target).read_bytes())
    data[len(data) // 2] ^= 0x01
    (signed / target).write_bytes(bytes(data))
    assert_fails_naming(signed, keys["signer.pub"], f"FAIL {target}: sha256 differs from the manifest")


def test_a_root_re_written_after_signing_fails(signed: Path, keys: dict[str, Path]):
    document = signed / "evidence_pack.json"
    pack = json.loads(document.read_text())
    pack["figures"][0]["verdict"] = "holds"  # an edited document: a new root, whatever else verify says
    document.write_text(json.dumps(pack, indent=2) + "\n")
    assert_fails_naming(signed, keys["signer.pub"], f"FAIL {PACK_SIGNATURE}: the root changed after signing")
    result = loadproof("verify", signed)  # without a key, the stale signature is named too
    assert result.exit_code == 1 and "re-written after signing" in result.output, result.output


def test_a_re_written_pack_is_signed_again_over_its_stale_signature(signed: Path, keys: dict[str, Path]):
    document = signed / "evidence_pack.json"
    pack = json.loads(document.read_text())
    pack["generated_at"] = "2099-01-01T00:00:00+00:00"  # a new root whose figures still verify
    document.write_text(json.dumps(pack, indent=2) + "\n")
    stale = loadproof("verify", signed)
    assert stale.exit_code == 1 and "re-written after signing" in stale.output, stale.output
    resigned = loadproof("sign", signed, "--key", keys["other.key"])
    assert resigned.exit_code == 0, resigned.output
    assert loadproof("verify", signed, "--public-key", keys["other.pub"]).exit_code == 0


def test_a_folder_that_does_not_verify_is_not_signed(demo_pack: DemoPack, tmp_path: Path, keys: dict[str, Path]):
    folder = tmp_path / "damaged"
    shutil.copytree(demo_pack.folder, folder, ignore=shutil.ignore_patterns(".dagster"))
    (folder / "notes.txt").write_text("not measured\n")
    result = loadproof("sign", folder, "--key", keys["signer.key"])
    assert result.exit_code == 1 and "not signed" in result.output, result.output
    assert not (folder / PACK_SIGNATURE).exists()
