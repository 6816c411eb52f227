"""Do this tree's queries still make every number a pack holds?

    PYTHONPATH=$PWD python bench/requery_pack.py out/demo

`loadproof verify` re-computes a pack with the pack's own copies of its queries (its `sql/`
folder), so it proves the pack, not today's `sql/`. This runs the same verification with the
repository's `sql/` in their place (`QueryCatalog.preferring` answers the repository's catalogue),
so a rewritten query is checked against every stored figure, sweep row and arm row of a pack made
before it, within verify's own tolerance (1e-9 relative). It prints the problems verify names
and exits 1 when there are any: a changed number, or a column the rewrite lost or renamed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.duck.catalog import QueryCatalog
from pipeline.pack.audit.verify import verify_pack


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", type=Path, help="a pack folder (out/demo)")
    args = parser.parse_args()
    QueryCatalog.preferring = lambda self, _folder: self  # type: ignore[method-assign,assignment]
    result = verify_pack(args.pack)
    print(
        f"{args.pack}: {len(result.problems)} problem(s); {result.figures_recomputed} figures, "
        f"{result.sweep_rows_recomputed} sweep rows and "
        f"{result.arm_rows_recomputed} arm rows re-computed with the repository's sql/"
    )
    for problem in result.problems:
        print(f"  {problem}")
    return 1 if result.problems else 0


if __name__ == "__main__":
    sys.exit(main())
