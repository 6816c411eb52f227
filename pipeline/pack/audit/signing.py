"""`loadproof sign` and `verify --public-key`: an Ed25519 signature of a pack folder's root.

What is signed is the root of the hash tree (`pack/audit/tree.py`): the sha256 of the folder's own
`evidence_pack.json`. That document lists the sha256 of every file of the folder (`manifest`) and
of each sub-pack's document (`subpacks`), which lists that sub-pack's files in turn, so the one
digest pins every byte below the folder; `loadproof verify` proves the files still match the tree,
and the signature proves who vouched for the tree. Signing the digest, not the files, keeps a
signature small, quick, and valid for exactly as long as the tree is: any flipped byte anywhere
fails the tree walk, and a re-written document (a new root) fails the signature.

The signature lives in one file beside the document (`contracts.PACK_SIGNATURE`), the one file a
manifest never lists (it is written after the document and cannot hash itself). It records the
root it signed and the signing key's fingerprint, so a failure can say why: no signature, another
key, or a root that changed after signing. The private key never enters the pack: signing refuses
a key file inside the folder.

Key files are PEM: PKCS8 private keys, SubjectPublicKeyInfo public keys (what `openssl genpkey
-algorithm ed25519` and `openssl pkey -pubout` write, and `loadproof keygen`).
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from pipeline.contracts import PACK_SIGNATURE
from pipeline.files.hashing import sha256_file
from pipeline.files.layout import write_text
from pipeline.pack.audit.tree import JSON_NAME

ALGORITHM = "Ed25519"
# what the key signs: a fixed context and the root's hex digest, so the same key signing
# anything else can never yield a valid pack signature
CONTEXT = b"loadproof evidence pack root sha256\n"


class SigningError(ValueError):
    """A key or folder that cannot be used (the CLI prints it and exits 2)."""


@dataclass(frozen=True)
class KeyPair:
    private: Path
    public: Path


def root_digest(pack_dir: Path) -> str:
    """The hash tree's root: the sha256 of the folder's evidence_pack.json."""
    document = Path(pack_dir) / JSON_NAME
    if not document.is_file():
        raise SigningError(f"{document}: not found (not an evidence pack folder?)")
    return sha256_file(document)


def generate_key_pair(prefix: Path) -> KeyPair:
    """A new Ed25519 key pair: PREFIX.key (PKCS8 PEM, owner-only) and PREFIX.pub (SubjectPublicKeyInfo PEM)."""
    pair = KeyPair(Path(f"{prefix}.key"), Path(f"{prefix}.pub"))
    for path in (pair.private, pair.public):
        if path.exists():
            raise SigningError(f"{path}: exists; not overwriting a key")
    key = Ed25519PrivateKey.generate()
    pair.private.parent.mkdir(parents=True, exist_ok=True)
    pair.private.touch(mode=0o600)
    pair.private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    pair.public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return pair


def sign_pack(pack_dir: Path, private_key: Path) -> Path:
    """Sign the folder's root with the PEM private key; returns the signature file written."""
    pack_dir = Path(pack_dir)
    if private_key.resolve().is_relative_to(pack_dir.resolve()):
        raise SigningError(f"{private_key}: the private key is inside the pack folder; keep it outside")
    key = _load_private(private_key)
    root = root_digest(pack_dir)
    signature = {
        "algorithm": ALGORITHM,
        "signs": f"sha256 of {JSON_NAME}: the root of the folder's hash tree",
        "root_sha256": root,
        "public_key_sha256": key_fingerprint(key.public_key()),
        "signature": base64.b64encode(key.sign(CONTEXT + root.encode("ascii"))).decode("ascii"),
        "signed_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return write_text(json.dumps(signature, indent=2) + "\n", pack_dir / PACK_SIGNATURE)


def signature_problem(pack_dir: Path, public_key: Path) -> str | None:
    """Why the folder's signature does not hold for `public_key`, or None when it does."""
    pack_dir = Path(pack_dir)
    key = _load_public(public_key)
    stored = _read_signature(pack_dir)
    if isinstance(stored, str):
        return stored
    given = key_fingerprint(key)
    if stored.get("public_key_sha256") != given:
        return (
            f"{PACK_SIGNATURE}: signed with another key (key sha256 {stored.get('public_key_sha256')}), "
            f"not {public_key} (key sha256 {given})"
        )
    root = root_digest(pack_dir)
    if moved := _root_moved(stored, root):
        return f"{PACK_SIGNATURE}: the root changed after signing: {moved}"
    try:
        key.verify(base64.b64decode(stored["signature"], validate=True), CONTEXT + root.encode("ascii"))
    except (InvalidSignature, KeyError, TypeError, ValueError):
        return f"{PACK_SIGNATURE}: the signature does not match the root it names (the signature file was edited)"
    return None


def stale_signature(pack_dir: Path) -> str | None:
    """A signature file whose recorded root is no longer the folder's (checked without a key: a
    signature that vouches for another tree is misleading in a folder handed on)."""
    pack_dir = Path(pack_dir)
    if not (pack_dir / PACK_SIGNATURE).exists():
        return None
    stored = _read_signature(pack_dir)
    if isinstance(stored, str):
        return stored
    if moved := _root_moved(stored, root_digest(pack_dir)):
        return f"{PACK_SIGNATURE}: {moved} (re-written after signing: sign it again, or remove the stale signature)"
    return None


def _root_moved(stored: dict, root: str) -> str | None:
    """What moved when the folder's root is not the one the signature file signs (None: it is)."""
    signed = stored.get("root_sha256")
    return None if signed == root else f"signs root {signed}, but {JSON_NAME} is now {root}"


def key_fingerprint(key: Ed25519PublicKey) -> str:
    """sha256 of the raw 32-byte public key: names a key in a signature and in a failure."""
    return hashlib.sha256(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)).hexdigest()


def _read_signature(pack_dir: Path) -> dict | str:
    path = pack_dir / PACK_SIGNATURE
    if not path.is_file():
        return f"{PACK_SIGNATURE}: no signature (the folder was not signed: loadproof sign {pack_dir} --key KEYFILE)"
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return f"{PACK_SIGNATURE}: unreadable ({error})"
    if not isinstance(stored, dict) or stored.get("algorithm") != ALGORITHM:
        return f"{PACK_SIGNATURE}: not an {ALGORITHM} pack signature"
    return stored


def _load_private(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise SigningError(f"{path}: not a readable unencrypted PEM (PKCS8) private key: {error}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"{path}: not an Ed25519 key ({type(key).__name__})")
    return key


def _load_public(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except (OSError, ValueError) as error:
        raise SigningError(f"{path}: not a readable PEM (SubjectPublicKeyInfo) public key: {error}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningError(f"{path}: not an Ed25519 key ({type(key).__name__})")
    return key
