"""The workshop's offline set-up, done as the guide says, on this machine.

``book/workshop.md`` tells the teacher to prepare a folder of wheels outside
the bundle (``python -m tools.dist --wheels``) and copy it in, and tells each
participant to type :data:`tools.dist.PARTICIPANT_COMMANDS`. Here:

* the guide's participant block, and the one of the bundle's README, are
  checked to be exactly those commands, in order;
* the wheels are prepared once and kept in ``_build/offline-wheels/KEY/``
  (KEY: a hash of ``requirements-participant.txt``, the Python version and
  the machine), so later runs skip the download; the project's own wheel is
  rebuilt every run, since ``lib`` changes;
* a participant bundle is built and unzipped in a temporary folder, the
  wheels copied in, and the participant commands run there as written, with
  pip's configuration switched off (``PIP_CONFIG_FILE=/dev/null``) so that
  nothing but ``wheels/`` can supply a package;
* one student notebook is executed in the new environment's kernel.

The first run needs the package registry; without it the test fails (it never
skips).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

import tools.dist
from tools.book_index import book_index
from tools.student import make_student
from tools.wheels import download_wheels, project_wheel

ROOT = Path(__file__).resolve().parents[1]

REQUIREMENTS = ROOT / "requirements-participant.txt"
GUIDE = ROOT / "book" / "workshop.md"
CHAPTER = ROOT / "notebooks" / "02_time_budget.ipynb"

#: Packages of requirements.txt that only build or test the book: none may reach a participant.
TOOLCHAIN = {"jupyter-book", "sphinx", "playwright", "axe-playwright-python", "hypothesis", "pytest",
             "nbval", "coverage", "sphinx-book-theme", "pydata-sphinx-theme", "sqlalchemy", "torch"}

#: What myst-nb declares but the notebooks never use (its book-building side), left out on purpose.
LEFT_OUT = {"sphinx", "myst-parser", "jupyter-cache", "importlib-metadata"}


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", requirement.split("==")[0].strip()).lower()


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].split(";")[0].strip()
        if "==" in line:
            pins[_name(line)] = line.split("==")[1].strip()
    return pins


def _guide_block(marker: str) -> list[str]:
    """The lines of the first fenced block after the MyST comment ``% marker`` in the guide."""
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(f"% {marker}")
    block = re.search(r"```[a-z]*\n(.*?)\n```", text[start:], re.DOTALL)
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def _readme_block(heading: str) -> list[str]:
    """The lines of the first indented block under ``heading`` in the bundle's README."""
    after = tools.dist.README[tools.dist.README.index(heading):]
    block = re.search(r"\n\n((?: {4}.*\n)+)", after)
    return [line.strip() for line in block.group(1).splitlines()]


def test_guide_and_readme_show_exactly_the_participant_commands():
    assert _guide_block("participant-commands") == tools.dist.PARTICIPANT_COMMANDS
    assert _readme_block("Running the notebooks without a network") == tools.dist.PARTICIPANT_COMMANDS


def test_participant_requirements_are_small_and_agree_with_the_build_pins():
    participant, build = _pins(REQUIREMENTS), _pins(ROOT / "requirements.txt")
    assert {"numpy", "matplotlib", "myst-nb", "ipykernel", "jupyterlab", "jupyterlab-myst"} <= set(participant)
    assert not TOOLCHAIN & set(participant), TOOLCHAIN & set(participant)
    different = {name: (version, build[name]) for name, version in participant.items()
                 if name in build and build[name] != version}
    assert not different, f"participant pins differ from requirements.txt: {different}"
    lines = [line.split("#")[0].strip() for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines()]
    assert not [line for line in lines if line.startswith(("-e", "."))], "no editable or local line"
    torch = _pins(ROOT / "requirements-participant-torch.txt")
    assert torch == {"torch": build["torch"]}


def _cache_key() -> str:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes())
    digest.update(f"{sys.version_info[:2]} {platform.machine()} {platform.system()}".encode())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="module")
def wheels() -> Path:
    """The participant wheels, downloaded once per requirements file, Python and machine."""
    cache = ROOT / "_build" / "offline-wheels" / _cache_key()
    if not (cache / ".complete").is_file():
        partial = cache.with_name(cache.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        try:
            download_wheels(partial, ROOT)
        except subprocess.CalledProcessError as error:
            pytest.fail(f"could not download the participant wheels (needs the package registry once): {error}")
        (partial / ".complete").write_text("pip download --no-deps -r requirements-participant.txt\n")
        shutil.rmtree(cache, ignore_errors=True)
        partial.rename(cache)
    return cache


def _clean_env(home: Path) -> dict[str, str]:
    """A participant's environment: no pip configuration, no Jupyter state, no PYTHONPATH."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PIP_", "JUPYTER", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1",
               JUPYTER_PLATFORM_DIRS="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(ROOT / ".venv")))
    return env


def test_offline_install_runs_a_student_notebook(wheels, tmp_path):
    # The teacher's side: the project's wheel (rebuilt: lib changes), the bundle, wheels/ copied in.
    project = project_wheel(tmp_path / "project", ROOT)
    with zipfile.ZipFile(project) as wheel:
        packaged = {name.rsplit("/", 1)[0] for name in wheel.namelist() if name.endswith("/__init__.py")}
    expected = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "lib").rglob("__init__.py")
                if "__pycache__" not in p.parts}
    assert expected <= packaged, (f"the project's wheel lacks {sorted(expected - packaged)}: pyproject.toml "
                                  "must list lib's subpackages (setuptools packages.find include lib*)")
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text("<html></html>")
    student = tmp_path / "student"
    student.mkdir()
    index = book_index(ROOT / "notebooks")
    nbformat.write(make_student(nbformat.read(CHAPTER, as_version=4), index), student / CHAPTER.name)
    bundle_zip = tools.dist.build_zip(tmp_path / "dist", root=ROOT, html=html, student=student)
    zipfile.ZipFile(bundle_zip).extractall(tmp_path / "room")
    bundle = tmp_path / "room" / tools.dist.NAME
    shutil.copytree(wheels, bundle / "wheels", ignore=shutil.ignore_patterns(".complete"))
    shutil.copy2(project, bundle / "wheels")

    # The participant's side: the guide's commands, as written, but the last (it opens JupyterLab).
    env = _clean_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    commands = _guide_block("participant-commands")
    assert commands[-1].startswith(".venv/bin/jupyter lab")
    for command in commands[:-1]:
        start = time.perf_counter()
        done = subprocess.run(["bash", "-c", command], cwd=bundle, env=env, capture_output=True, text=True)
        print(f"{command}: {time.perf_counter() - start:.1f} s")
        assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    venv = bundle / ".venv"
    python = venv / "bin" / "python"
    where = subprocess.run([str(python), "-c", "import lib, lib.collectives, myst_nb, jupyterlab_myst; "
                            "print(lib.__file__)"], cwd=bundle / "student", env=env,
                           capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    check = subprocess.run([str(python), "-m", "pip", "check"], env=env, capture_output=True, text=True)
    problems = [line for line in check.stdout.splitlines()
                if line.strip() and not re.match(r"myst-nb [\d.]+ requires ([\w.-]+), which is not installed",
                                                 line, re.IGNORECASE)]
    omitted = {_name(m) for m in re.findall(r"requires ([\w.-]+), which is not installed", check.stdout)}
    assert not problems, "\n".join(problems)
    assert omitted <= LEFT_OUT, omitted
    specs = subprocess.run([str(venv / "bin" / "jupyter"), "kernelspec", "list", "--json"], env=env,
                           capture_output=True, text=True)
    kernel = json.loads(specs.stdout)["kernelspecs"]["python3"]
    assert Path(kernel["resource_dir"]).is_relative_to(venv), kernel

    start = time.perf_counter()
    run = subprocess.run([str(venv / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                          f"student/{CHAPTER.name}", "--output-dir", str(tmp_path / "out"),
                          "--ExecutePreprocessor.timeout=300"],
                         cwd=bundle, env=env, capture_output=True, text=True)
    print(f"executing student/{CHAPTER.name}: {time.perf_counter() - start:.1f} s")
    assert run.returncode == 0, run.stderr[-4000:]
    executed = nbformat.read(tmp_path / "out" / CHAPTER.name, as_version=4)
    outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    assert outputs and not any(o.output_type == "error" for o in outputs)
    print(f"wheels: {sum(p.stat().st_size for p in (bundle / 'wheels').iterdir()) / 1e6:.0f} MB, "
          f"{len(list((bundle / 'wheels').glob('*.whl')))} files")
