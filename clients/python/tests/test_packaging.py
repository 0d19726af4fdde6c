"""The package as a user gets it: ``mypy --strict`` passes, ``py.typed`` is shipped, and ``pip install
./clients/python`` leaves nothing untracked in the checkout. mypy is looked for as a module of this interpreter,
then of /usr/bin/python3 (Debian's python3-mypy); without it the mypy test is skipped unless
PC_TEST_REQUIRE_CLIENTS=1."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import List, Optional, Set

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # clients/python
REQUIRED = bool(os.environ.get("PC_TEST_REQUIRE_CLIENTS"))


def _mypy() -> Optional[List[str]]:
    """A command running mypy, or None."""
    for python in (sys.executable, "/usr/bin/python3"):
        if not python or not os.path.exists(python):
            continue
        probe = subprocess.run([python, "-m", "mypy", "--version"], capture_output=True, text=True)
        if probe.returncode == 0:
            return [python, "-m", "mypy"]
    return None


def _pip() -> Optional[str]:
    """An interpreter that can build and install the package offline (pip, setuptools and wheel), or None."""
    for python in (sys.executable, "/usr/bin/python3"):
        if python and os.path.exists(python) and subprocess.run(
                [python, "-c", "import setuptools, wheel, pip"], capture_output=True).returncode == 0:
            return python
    return None


def _untracked(root: Path) -> Set[str]:
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", "."], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return {line[3:] for line in out.splitlines() if line.startswith("??")}


class PackagingTest(unittest.TestCase):
    def test_mypy_strict_passes(self) -> None:
        mypy = _mypy()
        if mypy is None:
            if REQUIRED:
                self.fail("mypy is required (PC_TEST_REQUIRE_CLIENTS=1): apt-get install python3-mypy")
            self.skipTest("mypy not found (apt-get install python3-mypy)")
        with tempfile.TemporaryDirectory(prefix="pc-mypy-") as cache:
            # The cache goes to a temporary directory, not into the checkout.
            r = subprocess.run(mypy + ["--strict", "--cache-dir", cache, "-p", "powercontext"], cwd=PACKAGE_DIR,
                               capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, "mypy --strict -p powercontext:\n" + r.stdout + r.stderr)

    def test_pip_install_ships_py_typed_and_leaves_the_checkout_clean(self) -> None:
        python = _pip()
        if shutil.which("git") is None or python is None:
            if REQUIRED:
                self.fail("git and a python3 with pip, setuptools and wheel are required (PC_TEST_REQUIRE_CLIENTS=1)")
            self.skipTest("git, or a python3 with pip, setuptools and wheel, not found")
        before = _untracked(PACKAGE_DIR)
        with tempfile.TemporaryDirectory(prefix="pc-pip-") as target:
            # No build isolation: PyPI may be unreachable; the interpreter's own setuptools builds the wheel.
            r = subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--root-user-action=ignore",
                                "--no-build-isolation", "--no-index", "--target", target, str(PACKAGE_DIR)],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, "pip install:\n" + r.stdout + r.stderr)
            installed = Path(target) / "powercontext"
            self.assertTrue((installed / "py.typed").is_file(), "py.typed is shipped")
            self.assertTrue((installed / "client.py").is_file())
        self.assertEqual(_untracked(PACKAGE_DIR) - before, set(),
                         "pip install left untracked files in the checkout (ignore them in clients/python/.gitignore)")


if __name__ == "__main__":
    unittest.main()
