"""The recorder as a wheel: ``pip wheel ./python`` with Debian's own packaging tools.

Debian's pip, setuptools and wheel build it without the network (``--no-build-isolation``: the
installed setuptools instead of a downloaded one). The wheel must hold every module and the format
definition, name torch as its only requirement, carry the C++ program's version, and import.
"""

from __future__ import annotations

import email.parser
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import PYTHON_DIR, cli_path


def build_wheel(tmp_path: Path) -> Path:
    """Builds the wheel from a copy of python/, so the build leaves nothing in the sources."""
    source = tmp_path / "source"
    shutil.copytree(PYTHON_DIR, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    out = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-q",
         "-w", str(out), str(source)],
        capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    wheels = list(out.glob("nanscope-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_holds_the_package_and_the_programs_version(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    program = subprocess.run([cli_path(), "--version"], capture_output=True, text=True, timeout=60)
    version = re.match(r"nanscope (\S+) \(", program.stdout)
    assert version, program.stdout + program.stderr
    assert wheel.name.startswith(f"nanscope-{version.group(1)}-py3-none-any")

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        modules = {f"nanscope/{p.name}" for p in (PYTHON_DIR / "nanscope").glob("*.py")}
        assert modules | {"nanscope/format.json"} <= names, sorted(modules - names)
        assert not any(name.startswith("tests/") or "/tests/" in name for name in names)
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
        archive.extractall(tmp_path / "installed")
    assert metadata["Version"] == version.group(1)
    assert metadata.get_all("Requires-Dist") == ["torch"]

    # What was packed imports and finds its format definition.
    imported = subprocess.run(
        [sys.executable, "-c", "import nanscope, nanscope.format as f; print(nanscope.__file__, f.FORMAT_VERSION)"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "installed"), "PATH": "/usr/bin:/bin"})
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith(str(tmp_path / "installed" / "nanscope" / "__init__.py"))
