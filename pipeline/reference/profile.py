"""Serving profiles: the knobs of the reference endpoint's performance model."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from pipeline.reference.oracle import OracleConfig

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"


class ServingProfile(BaseModel):
    """Timing model of a simulated serving engine (continuous batching, FIFO admission)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    model: str = "reference-model"
    version: str = "2026-11-01"
    prefill_ms_per_token: float = Field(ge=0)
    decode_ms_per_token: float = Field(ge=0)
    decode_slowdown_per_seq: float = Field(ge=0)
    max_running_seqs: int = Field(ge=1)
    default_max_tokens: int = Field(default=128, ge=0)
    seed: int = 0
    oracle: OracleConfig | None = None  # accuracy oracle (pipeline/reference/oracle.py)


def available_profiles() -> list[str]:
    """Names of the profiles shipped with the package."""
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))


def load_profile(name_or_path: str) -> ServingProfile:
    """Load a bundled profile by bare name, or a profile YAML file by path."""
    candidate = Path(name_or_path)
    is_path = candidate.suffix in {".yaml", ".yml"} or len(candidate.parts) > 1
    if is_path:
        if not candidate.is_file():
            raise ValueError(f"profile file not found: {name_or_path}")
        path = candidate
    else:
        path = PROFILES_DIR / f"{name_or_path}.yaml"
        if not path.is_file():
            raise ValueError(
                f"unknown serving profile {name_or_path!r}; "
                f"available: {', '.join(available_profiles())}"
            )
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"profile {path} must be a YAML mapping")
    profile = ServingProfile.model_validate(data)
    if profile.oracle is not None:
        profile = profile.model_copy(update={"oracle": profile.oracle.resolved(path.parent)})
    return profile
