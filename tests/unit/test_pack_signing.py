"""The signature of a pack folder's root (`pipeline/pack/audit/signing.py`) on a hand-built folder: the
right key holds, and each way it fails names its reason. The whole-graph flow (sign, then flip a
byte anywhere below the folder) is in tests/e2e/test_verify_signed.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pipeline.contracts import PACK_SIGNATURE
from pipeline.files.hashing import sha256_file
from pipeline.pack.audit.signing import SigningError, generate_key_pair, sign_pack, signature_problem, stale_signature
from pipeline.pack.audit.tree import covered_by


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    folder = tmp_path / "pack"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "raw_timings.parquet").write_bytes(b"rows")
    (folder / "evidence_pack.json").write_text(json.dumps({"run_id": "r1", "manifest": [], "subpacks": []}))
    return folder


def pem_pair(folder: Path, name: str) -> tuple[Path, Path]:
    """A key pair written with cryptography directly (what openssl writes too), not by keygen."""
    key = Ed25519PrivateKey.generate()
    private, public = folder / f"{name}.key", folder / f"{name}.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def test_a_signed_root_holds_for_its_key_and_fails_for_another(pack: Path, tmp_path: Path):
    private, public = pem_pair(tmp_path, "signer")
    _, other = pem_pair(tmp_path, "other")
    written = sign_pack(pack, private)
    assert written == pack / PACK_SIGNATURE
    assert signature_problem(pack, public) is None
    assert stale_signature(pack) is None
    assert "signed with another key" in (signature_problem(pack, other) or "")


def test_a_missing_signature_is_named(pack: Path, tmp_path: Path):
    _, public = pem_pair(tmp_path, "signer")
    assert "no signature" in (signature_problem(pack, public) or "")
    assert stale_signature(pack) is None  # nothing to be stale without a key


def test_a_root_changed_after_signing_is_named_with_and_without_a_key(pack: Path, tmp_path: Path):
    private, public = pem_pair(tmp_path, "signer")
    sign_pack(pack, private)
    (pack / "evidence_pack.json").write_text(json.dumps({"run_id": "r2", "manifest": [], "subpacks": []}))
    assert "the root changed after signing" in (signature_problem(pack, public) or "")
    assert "re-written after signing" in (stale_signature(pack) or "")


def test_an_edited_signature_fails_even_when_its_recorded_root_is_fixed_up(pack: Path, tmp_path: Path):
    private, public = pem_pair(tmp_path, "signer")
    sign_pack(pack, private)
    (pack / "evidence_pack.json").write_text(json.dumps({"run_id": "forged", "manifest": [], "subpacks": []}))
    stored = json.loads((pack / PACK_SIGNATURE).read_text())
    stored["root_sha256"] = sha256_file(pack / "evidence_pack.json")
    (pack / PACK_SIGNATURE).write_text(json.dumps(stored))
    assert "does not match the root it names" in (signature_problem(pack, public) or "")


def test_the_signature_is_the_one_file_beside_the_document_no_manifest_lists(pack: Path, tmp_path: Path):
    private, _ = pem_pair(tmp_path, "signer")
    sign_pack(pack, private)
    assert covered_by(pack).files == ["data/raw_timings.parquet"]
    (pack / "data" / PACK_SIGNATURE).write_text("{}")  # the name anywhere else is a plain file
    assert covered_by(pack).files == ["data/raw_timings.parquet", f"data/{PACK_SIGNATURE}"]


def test_the_private_key_never_enters_the_pack(pack: Path):
    private, _ = pem_pair(pack, "inside")
    with pytest.raises(SigningError, match="inside the pack folder"):
        sign_pack(pack, private)
    assert not (pack / PACK_SIGNATURE).exists()


def test_keygen_writes_a_pem_pair_that_signs_and_never_overwrites(pack: Path, tmp_path: Path):
    pair = generate_key_pair(tmp_path / "keys" / "auditor")
    assert pair.private.stat().st_mode & 0o077 == 0  # readable by its owner only
    assert pair.private.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert pair.public.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    sign_pack(pack, pair.private)
    assert signature_problem(pack, pair.public) is None
    with pytest.raises(SigningError, match="not overwriting"):
        generate_key_pair(tmp_path / "keys" / "auditor")


def test_a_key_of_another_kind_is_refused(pack: Path, tmp_path: Path):
    not_a_key = tmp_path / "notes.pem"
    not_a_key.write_text("hello")
    with pytest.raises(SigningError, match="not a readable"):
        sign_pack(pack, not_a_key)
    with pytest.raises(SigningError, match="not a readable"):
        signature_problem(pack, not_a_key)
