"""The house rules about where things live, checked so a change that breaks them fails here.

- The Dagster UI's groups are the asset modules: an asset's `group_name` is the basename of the
  module that defines it, and every check is defined beside its asset.
- Modules stay small: none under pipeline/, assets/ or resources/ is over 400 lines.
- One basename, one meaning in pipeline/: a name appears in several stage packages only under the
  "same feature, one module per stage" convention, and only in the stages listed below.
- Test modules stand alone: none imports another test module (builders live in tests/support/).
"""

from __future__ import annotations

import ast
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from dagster import AssetsDefinition

from assets import ASSET_MODULES
from pipeline import REPO_ROOT
from pipeline.definitions import defs

MAX_MODULE_LINES = 400
SIZE_RULED = ("pipeline", "assets", "resources")
# The one sanctioned kind of repeated basename under pipeline/: a feature that crosses stages has a
# module of the same name in each stage it touches, so the tree is the map. Each name lists the
# folders (relative to pipeline/) it may appear in; any other repeated basename fails.
SAME_FEATURE_IN_EACH_STAGE = {
    # the load sweep: declared, replayed, analysed, packed
    "sweep": {"spec", "replay/conditions", "analysis/sizing", "pack/assemble"},
    # the vendor's conditions and the attribution ladder: declared, planned, replayed, analysed, checked, packed
    "arms": {"spec", "plan", "replay/conditions", "analysis/judge", "quality", "pack/assemble"},
    "accuracy": {"spec", "plan", "quality/expectations"},  # the labelled slice: declared, mixed in, checked
    "sessions": {"plan", "replay/pacing"},  # multi-turn chat sessions: planned, then replayed turn by turn
    "tables": {"analysis/tabulate", "quality/expectations"},  # the analysis tables and the expectations on them
    "workload": {"spec", "quality/expectations"},  # the production traffic: declared, its tables checked
    # a repeated production replay: run, then split by run and combined
    "repeats": {"replay/production", "analysis/tabulate"},
    "privacy": {".", "spec"},  # privacy.text: declared (spec), applied by the leaf pipeline/privacy.py
    "capacity": {"analysis/sizing", "pack/assemble"},  # the capacity at the SLA: its rows re-derived, then packed
    "bill_check": {"analysis/tabulate", "pack/assemble"},  # billed vs counted tokens: computed, then packed
    "steady_state": {"analysis/statistics", "pack/assemble"},  # the detected steady window: tested, then packed
}


def _imported_names(tree: ast.Module) -> set[str]:
    """Module-level names bound by an import (including under a top-level if/try/with)."""
    names: set[str] = set()
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for field in ("body", "orelse", "finalbody", "handlers"):
                pending.extend(getattr(node, field, []))
        elif isinstance(node, ast.ExceptHandler):
            pending.extend(node.body)
    return names


def definitions_by_module() -> dict[str, list[AssetsDefinition]]:
    """Each group module's own asset and check definitions (by def, decorator or assignment), not
    the ones it imports to name as dependencies. A definition held only in a list (as a factory
    might return) belongs to the module whose list holds it; one bound to a name of its own
    belongs to that module, whichever lists also hold it (e.g. a list of upstream assets)."""
    direct: dict[int, str] = {}
    listed: dict[int, str] = {}
    objects: dict[int, AssetsDefinition] = {}
    for module in ASSET_MODULES:
        imported = _imported_names(ast.parse(Path(module.__file__).read_text()))
        for name, value in vars(module).items():
            if name in imported:
                continue
            if isinstance(value, AssetsDefinition):  # AssetChecksDefinition is one too
                direct[id(value)], objects[id(value)] = module.__name__, value
            elif isinstance(value, list | tuple):
                for item in value:
                    if isinstance(item, AssetsDefinition):
                        listed.setdefault(id(item), module.__name__)
                        objects[id(item)] = item
    by_module: dict[str, list[AssetsDefinition]] = defaultdict(list)
    for key, definition in objects.items():
        by_module[direct.get(key) or listed[key]].append(definition)
    return by_module


def test_every_asset_is_in_the_group_named_after_its_module():
    defining_module = {}
    wrong_group = []
    for module, definitions in definitions_by_module().items():
        for definition in definitions:
            for spec in definition.specs:
                defining_module[spec.key] = module
                if spec.group_name != module.rsplit(".", 1)[-1]:
                    wrong_group.append(f"{spec.key.to_user_string()}: group {spec.group_name!r} in {module}")
    assert wrong_group == []
    # every asset the code location holds was found in one of the group modules
    assert set(defs.resolve_asset_graph().get_all_asset_keys()) == set(defining_module)


def test_every_check_is_defined_beside_its_asset():
    asset_module, check_module = {}, {}
    for module, definitions in definitions_by_module().items():
        for definition in definitions:
            asset_module.update(dict.fromkeys(definition.keys, module))
            check_module.update(dict.fromkeys(definition.check_keys, module))
    assert check_module, "no asset check found in the asset modules"
    assert set(defs.resolve_asset_graph().asset_check_keys) == set(check_module)
    elsewhere = [
        f"{key.name} on {key.asset_key.to_user_string()}: in {module}, the asset in {asset_module[key.asset_key]}"
        for key, module in check_module.items()
        if asset_module[key.asset_key] != module
    ]
    assert elsewhere == []


def _ruled_modules() -> list[str]:
    return sorted(
        path.relative_to(REPO_ROOT).as_posix() for folder in SIZE_RULED for path in (REPO_ROOT / folder).rglob("*.py")
    )


@pytest.mark.parametrize(
    "module",
    _ruled_modules(),
)
def test_no_module_is_over_400_lines(module: str):
    """The house rule: modules of at most ~400 lines, so each reads in one sitting."""
    lines = len((REPO_ROOT / module).read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{module}: {lines} lines"


def test_the_size_rule_covers_every_package():
    modules = _ruled_modules()
    assert {path.split("/")[0] for path in modules} == set(SIZE_RULED)


def test_a_basename_repeats_in_pipeline_only_as_the_same_feature_in_each_stage():
    folders_by_name: dict[str, set[str]] = defaultdict(set)
    root = REPO_ROOT / "pipeline"
    for path in root.rglob("*.py"):
        folders_by_name[path.stem].add(path.parent.relative_to(root).as_posix())
    repeated = {name: folders for name, folders in folders_by_name.items() if len(folders) > 1}
    repeated.pop("__init__")
    unsanctioned = {
        name: sorted(folders - SAME_FEATURE_IN_EACH_STAGE.get(name, set()))
        for name, folders in repeated.items()
        if not folders <= SAME_FEATURE_IN_EACH_STAGE.get(name, set())
    }
    assert unsanctioned == {}


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)


def _imports(source: str, module: str) -> set[str]:
    """Every module a file imports, at any depth: import statements (relative ones resolved) and
    `__import__` / `importlib.import_module` of a literal name."""
    package = module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from tests.x import test_y`
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            callee = node.func
            name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
            if name in {"__import__", "import_module"} and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
    return found


def _is_test_module(name: str) -> bool:
    leaf = name.rsplit(".", 1)[-1]
    return leaf.startswith("test_") or leaf == "conftest"


def test_no_test_module_imports_another_test_module():
    tests = REPO_ROOT / "tests"
    files = sorted(tests.rglob("*.py"))
    assert any(_is_test_module(_module_name(path)) for path in files)
    crossing = {
        module: sorted(
            name for name in _imports(path.read_text(), module) if name.startswith("tests.") and _is_test_module(name)
        )
        for path in files
        for module in [_module_name(path)]
    }
    assert {name: imported for name, imported in crossing.items() if imported} == {}


def test_the_import_scan_sees_each_kind_of_test_module_import():
    """The scan above sees the imports it forbids, so its silence means something."""
    source = (
        "from tests.unit.test_spec import x\n"
        "import tests.conftest\n"
        "from . import test_arrivals\n"
        "from .test_stats import y\n"
        "def later():\n"
        "    __import__('tests.e2e.test_shards')\n"
    )
    found = {name for name in _imports(source, "tests.unit.probe") if _is_test_module(name)}
    assert found == {
        "tests.unit.test_spec",
        "tests.conftest",
        "tests.unit.test_arrivals",
        "tests.unit.test_stats",
        "tests.e2e.test_shards",
    }


def test_no_tracked_text_file_holds_a_merge_conflict_marker():
    """A conflict left in a document (it once reached ARCHITECTURE.md) breaks no import, so no
    other test would notice it."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    markers = ("<<<<<<< ", ">>>>>>> ")
    found = []
    for name in tracked:
        path = REPO_ROOT / name
        if (
            path.suffix not in {".py", ".md", ".sql", ".yaml", ".yml", ".toml", ".j2", ".json", ".txt"}
            or not path.is_file()
        ):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
            if line.startswith(markers):
                found.append(f"{name}:{number}")
    assert found == []
