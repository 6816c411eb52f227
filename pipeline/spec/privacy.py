"""The spec's `privacy` section: what of the buyer's customer text a re-validation keeps.

The replay always sends the real text to the candidates; this setting decides only what is
*kept* (pack files, journals, Dagster metadata, log lines). docs/privacy.md lists
what stays under each value and where the text the replay needs lives meanwhile.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipeline.spec.base import Strict

TextPolicy = Literal["drop", "hash", "keep"]
DEFAULT_SALT_ENV = "LOADPROOF_PRIVACY_SALT"


class Privacy(Strict):
    text: TextPolicy = Field(
        default="hash",
        description=(
            "hash: no prompt, message or reply text kept; tenant, route and session ids as salted hashes, prefix "
            "blocks as salted hashes; drop: the same without the identifiers and prefix hashes; keep: everything"
        ),
    )
    salt_env: str = Field(
        default=DEFAULT_SALT_ENV,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description=(
            "environment variable holding the salt of `hash` (same salt, same hashes: packs can be joined on them); "
            "unset: a random salt per ingest, never written"
        ),
    )
