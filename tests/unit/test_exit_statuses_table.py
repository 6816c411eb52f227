"""Every exit status the CLI's code can give is a row of `pipeline/exit_statuses.py`, the table the
docs' exit-status page is generated from: a new `typer.Exit(N)` with an N the table does not explain
fails here."""

import ast

from pipeline import REPO_ROOT
from pipeline.exit_statuses import BAD_INPUT, EXIT_STATUSES, FAILED, OK

CLI_MODULES = ("pipeline/cli.py", "pipeline/cli_output.py")


def exit_codes(source: str) -> set[int]:
    """The literal codes of `typer.Exit(N)` (and `typer.Exit(0 if … else 1)`) in a module."""
    codes: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Exit":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, int) and not isinstance(sub.value, bool):
                    codes.add(sub.value)
    return codes


def test_every_exit_the_cli_gives_is_in_the_table():
    documented = {int(status.code) for status in EXIT_STATUSES if status.code.isdigit()}
    assert documented == {OK, FAILED, BAD_INPUT}
    given = set().union(*(exit_codes((REPO_ROOT / name).read_text(encoding="utf-8")) for name in CLI_MODULES))
    assert given and given <= documented, given - documented


def test_the_scan_sees_an_exit_in_each_spelling():
    source = "raise typer.Exit(2)\nraise typer.Exit(0 if ok else 1)\nraise typer.Exit(code=7) from None\n"
    assert exit_codes(source) == {0, 1, 2, 7}
