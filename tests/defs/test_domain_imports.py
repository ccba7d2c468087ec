"""Issue 22.8: domain code never imports the Dagster layer (`chpit_assets.defs`).

Every module of the package is parsed (imports inside functions included, relative ones resolved);
only the modules that wire Dagster itself may import `chpit_assets.defs`: the defs folder, the code
location, the command lines and the orchestration that drive it, the instance set-up and the
nightly's request. A domain module that needs a path takes a `chpit_assets.layout.Layout`.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "chpit_assets"
DEFS = "chpit_assets.defs"
WIRING = ("chpit_assets.definitions", "chpit_assets.cli", "chpit_assets.instance", "chpit_assets.nightly")
WIRING_PACKAGES = (DEFS, "chpit_assets.orchestration")


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, package_dir: Path = PACKAGE) -> set[str]:
    """Every module `path` imports, absolute, with `from x import y` counted as x and x.y (y may be a module)."""
    name = module_name(path, package_dir)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def allowed(name: str) -> bool:
    return (
        name in WIRING or name.endswith(".cli") or any(name == p or name.startswith(p + ".") for p in WIRING_PACKAGES)
    )


def imports_defs(path: Path, package_dir: Path = PACKAGE) -> list[str]:
    return sorted(m for m in imported_modules(path, package_dir) if m == DEFS or m.startswith(DEFS + "."))


def test_no_domain_module_imports_the_dagster_layer() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50  # the walk really sees the package
    offenders = {module_name(p): found for p in modules if not allowed(module_name(p)) and (found := imports_defs(p))}
    assert offenders == {}


def test_the_walk_sees_relative_and_function_level_imports(tmp_path: Path) -> None:
    """The check above could pass by missing an import form: each form is found here."""
    package = tmp_path / "chpit_assets"
    module = package / "report" / "compare.py"
    module.parent.mkdir(parents=True)
    for source, found in (
        (
            "def f():\n    from ..defs.resources import ChpitStore\n",
            ["chpit_assets.defs.resources", "chpit_assets.defs.resources.ChpitStore"],
        ),
        ("import chpit_assets.defs.partitions\n", ["chpit_assets.defs.partitions"]),
        ("from chpit_assets import defs\n", ["chpit_assets.defs"]),
        ("from .. import defs\n", ["chpit_assets.defs"]),
        ("from chpit_assets.layout import Layout\n", []),
    ):
        module.write_text(source)
        assert imports_defs(module, package) == found, source
    assert not allowed("chpit_assets.report.compare") and allowed("chpit_assets.defs.runs.assets")
