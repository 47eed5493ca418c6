"""emmy installs as the ecosystem expects: what it needs to run as its dependencies, the test tools
as the `test` extra, every version CI installs pinned, and a typed package that type checkers find.

    [project] dependencies = ["xdsl==0.75.0", "torch==2.13.0", "numpy>=2,<3", ...]
    [project.optional-dependencies] test = ["pytest", "hypothesis", "lit", "filecheck", ...]
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
TEST_TOOLS = {"pytest", "hypothesis", "lit", "filecheck", "ruff"}
RUNTIME_FOLDERS = ("emmy", "emmy_dialects", "passes", "tools")


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares names."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(specs: list[str]) -> dict[str, Requirement]:
    return {canonical(req.name): req for req in map(Requirement, specs)}


RUNTIME = requirements(PROJECT["dependencies"])
TEST_EXTRA = requirements(PROJECT["optional-dependencies"]["test"])


def pins() -> dict[str, str]:
    """constraints.txt: each distribution's pinned version."""
    pinned = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pinned[canonical(name)] = version.strip()
    return pinned


def installed_version(name: str) -> str | None:
    """The installed version of a distribution, less a local label such as torch's +cpu."""
    try:
        return distribution(name).version.partition("+")[0]
    except PackageNotFoundError:
        return None


def closure(names: set[str]) -> set[str]:
    """These distributions and everything they pull in, as their installed versions say."""
    found: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found.add(name)
        for spec in distribution(name).requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                pending.append(canonical(req.name))
    return found


def test_runtime_dependencies_exclude_the_test_tools():
    assert not TEST_TOOLS & RUNTIME.keys()
    assert {"xdsl", "torch", "numpy", "cuda-python", "cuda-core"} <= RUNTIME.keys()


def test_the_test_extra_holds_the_test_tools():
    assert TEST_TOOLS <= TEST_EXTRA.keys()
    assert str(TEST_EXTRA["ruff"].specifier) == "==0.17.6"


def test_every_runtime_dependency_is_bounded():
    for name, req in RUNTIME.items():
        operators = {spec.operator for spec in req.specifier}
        assert "==" in operators or {"<", ">="} <= operators, f"{name} floats: {req}"


def runtime_modules() -> list[Path]:
    return sorted(path for folder in RUNTIME_FOLDERS for path in (ROOT / folder).rglob("*.py"))


def imported_top_levels(path: Path) -> set[str]:
    """The top-level names that a module's absolute imports, anywhere in it, name."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return names


# The distribution each third-party name that emmy imports comes from.
RUNTIME_IMPORTS = {"xdsl": "xdsl", "torch": "torch", "numpy": "numpy", "cuda": "cuda-python"}


def test_runtime_modules_import_only_the_stdlib_emmy_and_runtime_dependencies():
    """A test tool imported by a runtime module, even lazily, is missing where emmy is installed
    without the `test` extra."""
    assert set(RUNTIME_IMPORTS.values()) <= RUNTIME.keys()
    modules = runtime_modules()
    assert len(modules) > 50
    for path in modules:
        third_party = imported_top_levels(path) - set(sys.stdlib_module_names) - {"emmy"}
        assert third_party <= RUNTIME_IMPORTS.keys(), f"{path.relative_to(ROOT)}: {third_party}"


def test_the_constraints_pin_every_dependency_to_a_version_pyproject_allows():
    pinned = pins()
    for name, req in {**RUNTIME, **TEST_EXTRA}.items():
        assert name in pinned, f"constraints.txt does not pin {name}"
        assert req.specifier.contains(pinned[name]), f"{name}=={pinned[name]} is not {req}"


def test_the_constraints_pin_all_that_emmy_and_its_tests_pull_in():
    """Read off the installed metadata, so only where the pinned versions are the installed ones
    (not on a GPU host that brings its own torch and installs emmy with --no-deps)."""
    pinned = pins()
    direct = RUNTIME.keys() | TEST_EXTRA.keys()
    unpinned = sorted(name for name in direct if installed_version(name) != pinned.get(name))
    if unpinned:
        pytest.skip(f"the installed {', '.join(unpinned)} are not the pinned versions")
    assert closure(direct) <= pinned.keys()


def test_the_package_is_typed_and_the_marker_is_shipped():
    assert (ROOT / "src" / "emmy" / "py.typed").is_file()
    assert "py.typed" in SETUPTOOLS["package-data"]["emmy"]


def test_each_package_lies_at_its_dotted_path_under_src():
    """setuptools installs such a layout editable as a static .pth, which mypy and pyright read;
    a package-dir that renames folders needs an import hook that they cannot see."""
    assert SETUPTOOLS["package-dir"] == {"": "src"}
    editable_metadata = {"emmy.egg-info"}
    assert {path.name for path in (ROOT / "src").iterdir()} - editable_metadata == {"emmy"}
    assert (ROOT / "src" / "emmy").resolve() == ROOT / "emmy"
    folders = {"dialects": "emmy_dialects", "passes": "passes", "tools": "tools"}
    for package, folder in folders.items():
        assert (ROOT / "src" / "emmy" / package).resolve() == ROOT / folder
    for package in SETUPTOOLS["packages"]:
        assert (ROOT / "src" / package.replace(".", "/") / "__init__.py").is_file(), package


def test_ci_runs_exactly_the_readmes_install_and_test_commands():
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("\n## Setup and tests\n", 1)[1].split("\n## ", 1)[0]
    readme_commands = re.findall(r"^    (\S.*)$", setup, re.MULTILINE)
    ci_commands = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert readme_commands == ci_commands
    install, check = ci_commands
    assert "pip install -e '.[test]' -c constraints.txt" in install
    assert "lit -sv test" in check and "pytest -q" in check
