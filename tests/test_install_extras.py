"""Every extra named in a documented ``pip install`` line exists in the built package metadata.

pip has compared extras differently over the years: pip 23.2 (what ``python3 -m venv`` gives
on Debian 12) matches the requested name after the legacy ``safe_extra`` rewrite, newer pips
after PEP 685 normalisation, and setuptools writes ``Provides-Extra`` in one form or the other
depending on its version. A name made of lowercase letters, digits and single hyphens is the
same under every one of those rules, so it resolves with any pip and any setuptools.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from email.parser import HeaderParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_EXTRAS = re.compile(r"\[([A-Za-z0-9_.,\- ]+)\]")


def _pep685(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _legacy_safe_extra(name: str) -> str:
    # pkg_resources.safe_extra, which pip 23.2 still applies to a requested extra.
    return re.sub(r"[^A-Za-z0-9.-]+", "_", name).lower()


def documented_extras() -> list[tuple[str, str]]:
    """(where, extra) for each extra in a `pip install` line of README.md and docs/."""
    found: list[tuple[str, str]] = []
    for path in DOC_FILES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "pip install" not in line:
                continue
            command = line[line.index("pip install") :]
            for group in _EXTRAS.findall(command):
                for extra in group.split(","):
                    found.append((f"{path.relative_to(ROOT)}:{number}", extra.strip()))
    return found


@pytest.fixture(scope="module")
def provided_extras(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Provides-Extra of metadata built now from pyproject.toml (offline, by setuptools)."""
    out = tmp_path_factory.mktemp("egg-info")
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from setuptools import setup; setup()",
            "-q",
            "egg_info",
            "--egg-base",
            str(out),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (pkg_info,) = out.glob("*.egg-info/PKG-INFO")
    metadata = HeaderParser().parsestr(pkg_info.read_text(encoding="utf-8"))
    return set(metadata.get_all("Provides-Extra") or [])


def test_the_docs_name_extras_in_pip_install_lines() -> None:
    extras = {extra for _, extra in documented_extras()}
    assert {"local", "local-1-5b", "dev", "corpus"} <= extras


def test_every_documented_extra_is_provided_by_the_built_metadata(
    provided_extras: set[str],
) -> None:
    missing = [(where, e) for where, e in documented_extras() if e not in provided_extras]
    assert not missing, f"documented extras the package does not provide: {missing}"


def test_every_documented_extra_reads_the_same_to_old_and_new_pip() -> None:
    fragile = [
        (where, e)
        for where, e in documented_extras()
        if _pep685(e) != e or _legacy_safe_extra(e) != e
    ]
    assert not fragile, f"extras that some pip versions rewrite: {fragile}"


def test_every_extra_in_pyproject_reads_the_same_to_old_and_new_pip() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = project["project"]["optional-dependencies"]
    fragile = [e for e in names if _pep685(e) != e or _legacy_safe_extra(e) != e]
    assert not fragile, f"extras whose spelling depends on the pip/setuptools version: {fragile}"
