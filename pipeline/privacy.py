"""What of the customer's text a re-validation keeps (the spec's `privacy.text`), and where the
text the replay needs lives meanwhile.

Under `hash` and `drop` the pack folder (every file under it, the Dagster instance in its
`.dagster/` included) holds no prompt, message or reply text: a table with text is written twice,
whole into the *private folder* beside the pack folder (`<pack>.private/`, owner-only: 0700,
files 0600) and with its text withheld into the pack. The steps that need the text (the sample,
the plan, the replay, the accuracy slice) read the private copy; every other step reads the pack.
Why a folder beside, not inside: the pack is what is shared (signed, sent to a committee), and a
file inside it would be in its manifest; why not a temporary folder: a single asset can be
re-materialised later (`dagster dev`), and it needs the text of the steps before it.

Messages withheld keep their structure: one `{"role", "chars"}` per message, so the profile's
shares (multi-turn, system-prompted) still count. Identifiers are salted at ingest, in SQL
(sql/ingest_accepted.sql), so every copy agrees; this module never sees the salt.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pyarrow as pa

KEEP, HASH, DROP = "keep", "hash", "drop"
PRIVATE_SUFFIX = ".private"
# columns that hold text, in any table a re-validation writes: messages keep their structure,
# the others become NULL (the quarantine's `raw` is withheld by its SQL, with the reasons' values)
MESSAGE_COLUMNS = frozenset({"messages_json"})
TEXT_COLUMNS = frozenset({"text", "reply", "reply_text", "raw", "expected_json"})  # expected_json: arguments


def private_root(pack_root: Path) -> Path:
    """`<pack>.private`, beside the pack folder (never inside it, nor in the Dagster instance)."""
    pack_root = Path(pack_root).resolve()
    return pack_root.with_name(pack_root.name + PRIVATE_SUFFIX)


def make_private(root: Path) -> Path:
    """Create the private folder owner-only (0700); files written below it are made 0600."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(root, 0o700)
    return root


def owner_only(path: Path) -> Path:
    os.chmod(path, 0o600)
    return path


SALT_FILE = "identifier-salt"  # in the pack's owner-only private folder, beside the customer text


def salt(salt_env: str, private_root: Path | None = None) -> str:
    """The salt of `hash`: the environment variable the spec names, else a random one drawn once
    per pack and kept in its owner-only private folder (`private_root`), so that ingesting the
    same log again hashes it alike (the same bytes: a re-materialised pack still verifies); never
    in the pack, the logs or SQL text. A random salt makes this pack's hashes its own (two packs
    can be joined on tenant, session or prefix hashes only when both were ingested with one salt).
    Without `private_root`, a fresh random salt each call."""
    if value := os.environ.get(salt_env):
        return value
    if private_root is None:
        return secrets.token_hex(32)
    path = private_root / SALT_FILE
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    private_root.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(32)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(value, encoding="utf-8")
    owner_only(partial)
    os.replace(partial, path)
    return value


def message_structure(messages_json: str | None) -> str | None:
    """The messages without their text: `[{"role": ..., "chars": N}]` (a plain-text prompt, as a
    CSV column may hold, is one message without a role)."""
    if messages_json is None:
        return None
    try:
        parsed = json.loads(messages_json)
    except ValueError:
        parsed = messages_json
    if not isinstance(parsed, list):
        return json.dumps([{"role": None, "chars": len(messages_json)}])
    shaped = []
    for message in parsed:
        content = message.get("content") if isinstance(message, dict) else message
        # a list of parts counts as its compact JSON, as sql/ingest_withheld.sql counts it
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, separators=(",", ":"))
        shaped.append({"role": message.get("role") if isinstance(message, dict) else None, "chars": len(text or "")})
    return json.dumps(shaped)


def withhold_text(table: pa.Table, policy: str) -> pa.Table:
    """`table` as the pack may keep it under `policy`: messages reduced to their structure, every
    other text column NULL (same columns, same types: readers and the data contracts are unchanged)."""
    if policy == KEEP:
        return table
    for index, name in enumerate(table.schema.names):
        field = table.schema.field(index)
        if name in MESSAGE_COLUMNS:
            values = [message_structure(v) for v in table.column(index).to_pylist()]
            table = table.set_column(index, field, pa.array(values, field.type))
        elif name in TEXT_COLUMNS:
            table = table.set_column(index, field, pa.nulls(table.num_rows, field.type))
    return table


class TextWithheld(ValueError):
    """A step that sends messages was given a table whose text is withheld (the pack's copy)."""


def require_text(messages: list, where: str) -> list:
    """`messages` unless they are a withheld structure (`{"role", "chars"}` without content): a
    replay must read the private copy (`assets.support.privacy.plan_with_text`), never send those."""
    if any(isinstance(m, dict) and "chars" in m and "content" not in m for m in messages):
        raise TextWithheld(f"{where}: the messages' text is withheld (privacy.text); read the private copy")
    return messages
