"""Candidate names and model versions as partition keys and folder names."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9._+@=-]")


def partition_safe(text: str) -> str:
    """Dagster partition keys may not hold `|`, `,` or brackets, and a folder name no `/`: every
    character outside [A-Za-z0-9._+@=-] becomes `_` (e.g. `meta-llama/Llama-3` → `meta-llama_Llama-3`)."""
    safe = _UNSAFE.sub("_", text.strip())
    return safe if safe not in {"", ".", ".."} else f"_{safe}_"
