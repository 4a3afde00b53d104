"""pyproject.toml: the editable install that `make setup` (and so the first `make run`) makes is quiet.

setuptools chooses how to make an editable install from the package layout. With the flat layout and no
`package-dir`, it installs a meta-path finder and prints a warning box ("Editable installation. Please be careful
with folders in your working directory…") that pip shows before the TUI opens on a first `make run`. With
`package-dir = {"" = "."}` it writes a plain `.pth` file pointing at the project and says nothing. The build is
made here with the setuptools of the test environment (`setuptools>=77`, a dev dependency, as the build
requirement would fetch), in a subprocess, on a copy of pyproject.toml: nothing is downloaded."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("backend", "socialpub_tui", "recipes")


def test_the_editable_install_says_nothing_and_is_a_plain_path_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    shutil.copy(ROOT / "README.md", project / "README.md")
    for package in PACKAGES:
        (project / package).mkdir()
        (project / package / "__init__.py").write_text("")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "default",
            "-c",
            "import sys; from setuptools import build_meta; print(build_meta.build_editable(sys.argv[1]))",
            str(wheels),
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    noise = [
        line
        for line in done.stderr.splitlines()
        if "Warning" in line or "warning" in line or "careful" in line or "!!" in line
    ]
    assert noise == [], "\n".join(noise)
    wheel = wheels / done.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        pth = [n for n in names if n.endswith(".pth")]
        assert len(pth) == 1, names
        assert zf.read(pth[0]).decode().strip() == str(project.resolve())
        assert not [n for n in names if n.endswith("finder.py")], names
