"""Where ../shared/data is: beside the checkout (REPO_ROOT.parent), or beside a worktree folder."""

from pathlib import Path

from pipeline import REPO_ROOT


def shared_data(name: str) -> Path:
    """The folder `name` under the first shared/data found; a path that does not exist otherwise."""
    for root in (REPO_ROOT.parent, REPO_ROOT.parent.parent):
        candidate = root / "shared" / "data" / name
        if candidate.is_dir():
            return candidate
    return REPO_ROOT.parent / "shared" / "data" / name
