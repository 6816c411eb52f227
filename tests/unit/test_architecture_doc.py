"""ARCHITECTURE.md's generated parts (the asset graph's assets and checks, the metric glossary) are
what `scripts/architecture_tables.py` writes from the code today: a new asset, check or figure that
the document does not show fails here, with the command that mends it."""

import subprocess
import sys

from pipeline import REPO_ROOT


def test_the_generated_parts_of_architecture_md_match_the_code():
    script = REPO_ROOT / "scripts" / "architecture_tables.py"
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
