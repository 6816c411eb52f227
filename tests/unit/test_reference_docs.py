"""The docs' reference pages (the spec's fields, the metric catalogue, the asset graph, the CLI, the
exit statuses, the default serve-reference profile) are what `docs/gen_reference.py` writes from
the code today: a renamed field, option or figure that a page does not show fails here, with the
command that mends it. (The site itself is built by `make docs`, `mkdocs build --strict`.)"""

import subprocess
import sys

from pipeline import REPO_ROOT


def test_the_generated_reference_pages_match_the_code():
    script = REPO_ROOT / "docs" / "gen_reference.py"
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def test_every_generated_page_is_in_the_sites_nav():
    import yaml

    nav = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(path.name for path in (REPO_ROOT / "docs" / "reference").glob("*.md"))
    assert pages and all(f"reference/{name}" in nav for name in pages)
    assert yaml.safe_load(nav.replace("!!python/name:", "")) is not None
