"""Tests for the layout of tests/unit: tests/unit/<path>/test_<name>.py tests the module <path>/<name>.py.

A package's own test file is tests/unit/<path>/test_<package>.py (for what <path>/<package>/__init__.py and
__main__.py define). Run this file as a script, or with ``pytest -rP``, to see the modules with no test file.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "tests" / "unit"
PACKAGES = ("lib", "tools")


def unit_test_files() -> list[Path]:
    """Every test file under tests/unit but this one."""
    return sorted(p for p in UNIT.rglob("test_*.py") if p.resolve() != Path(__file__).resolve())


def module_named_by(test_file: Path) -> Path:
    """tests/unit/<path>/test_<name>.py -> <path>/<name> (a module without its .py, or a package)."""
    rel = test_file.relative_to(UNIT)
    return ROOT / rel.parent / rel.name.removeprefix("test_").removesuffix(".py")


def expected_test_file(module: Path) -> Path:
    """Where the tests of a module of lib or tools live; __init__.py and __main__.py share their package's."""
    rel = module.relative_to(ROOT)
    if rel.name in ("__init__.py", "__main__.py"):
        return UNIT / rel.parent.parent / f"test_{rel.parent.name}.py"
    return UNIT / rel.parent / f"test_{rel.stem}.py"


def defines_code(module: Path) -> bool:
    """Whether a module defines a function or a class (a package's __init__.py that only re-exports does not)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for node in tree.body)


def untested_modules() -> list[str]:
    """The modules of lib and tools with no test file of their own (the packages' bare __init__.py left out)."""
    missing = []
    for package in PACKAGES:
        for module in sorted((ROOT / package).rglob("*.py")):
            if module.parent == ROOT / package and module.name == "__init__.py":
                continue
            if module.name == "__init__.py" and not defines_code(module):
                continue
            if not expected_test_file(module).is_file():
                missing.append(module.relative_to(ROOT).as_posix())
    return missing


def report() -> str:
    missing = untested_modules()
    return f"{len(missing)} modules of {' and '.join(PACKAGES)} have no test file of their own:\n" + "\n".join(
        f"  {name}" for name in missing
    )


def test_every_test_file_names_a_module_of_the_repository():
    orphans = [
        p.relative_to(ROOT).as_posix()
        for p in unit_test_files()
        if not (module_named_by(p).with_suffix(".py").is_file() or module_named_by(p).is_dir())
    ]
    assert not orphans, (
        "tests/unit/<path>/test_<name>.py tests <path>/<name>.py (or the package <path>/<name>/); "
        f"these name no module: {orphans}"
    )


def test_the_rule_finds_this_repositorys_modules():
    # The check above can fail: a made-up name has no module, a real one has.
    assert not module_named_by(UNIT / "lib" / "test_no_such_module.py").with_suffix(".py").is_file()
    assert module_named_by(UNIT / "lib" / "serving" / "test_step.py") == ROOT / "lib" / "serving" / "step"
    assert module_named_by(UNIT / "lib" / "test_measure.py").is_dir()
    assert expected_test_file(ROOT / "lib" / "serving" / "__main__.py") == UNIT / "lib" / "test_serving.py"


def test_modules_without_a_test_file_are_listed():
    """Information, not a failure: the modules of lib and tools that no test file names."""
    text = report()
    print(text)
    assert text.startswith(f"{len(untested_modules())} modules")


if __name__ == "__main__":
    print(report())
