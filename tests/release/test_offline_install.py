"""The workshop's offline set-up, done as the guide says, under every supported Python.

``book/workshop.md`` tells the teacher to prepare a folder of wheels outside
the bundle (``python -m tools.release.wheels``) and copy its files in, and tells each
participant to type :data:`tools.release.dist.PARTICIPANT_COMMANDS`. Here:

* the guide's participant block, and the one of the bundle's README, are
  checked to be exactly those commands, in order;
* the participant pins are checked against ``requirements.txt``;
* for each supported Python line (:data:`tools.release.wheel_targets.PYTHONS`: 3.11,
  3.12, 3.13) the oldest interpreter of that line found here
  (:func:`tools.prerequisites.find_python`; Debian 12's 3.11.2 for 3.11) runs
  the participants' install. Its wheels, for this machine's platform and
  that Python, are downloaded once by :func:`tools.release.wheels.download_wheels`
  and kept in ``_build/offline-wheels/KEY/`` (KEY: a hash of the
  requirements file and the target), so later runs skip the download; the
  project's own wheel is rebuilt every run, since ``lib`` changes;
* a participant bundle is built and unzipped in a temporary folder, the
  wheels copied in, and the participant commands run there as written (with
  that interpreter for ``python3``), with pip's configuration switched off
  (``PIP_CONFIG_FILE=/dev/null``, ``PIP_NO_INDEX=1``) so that nothing but
  ``wheels/`` can supply a package;
* the environment is checked (``pip check``, the kernel, JupyterLab's room
  settings) and one student notebook is executed in its kernel.

A supported Python that is missing here skips its test with a message; in CI
(``$CI`` set) it fails. The first run needs the package registry; without it
the test fails (it never skips).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

import tools.release.dist
from tools.notebooks.book_index import book_index
from tools.prerequisites import find_python, require
from tools.release.wheel_check import LEFT_OUT, canonical
from tools.release.wheel_targets import PYTHONS, Target, host_platform
from tools.release.wheels import download_wheels, project_wheel
from tools.teaching.student import make_student

ROOT = Path(__file__).resolve().parents[2]

REQUIREMENTS = ROOT / "requirements-participant.txt"
GUIDE = ROOT / "book" / "workshop.md"
CHAPTER = ROOT / "notebooks" / "01_splitting_a_matrix.ipynb"

#: Packages of requirements.txt that only build or test the book: none may reach a participant.
TOOLCHAIN = {
    "jupyter-book",
    "sphinx",
    "playwright",
    "axe-playwright-python",
    "hypothesis",
    "pytest",
    "nbval",
    "coverage",
    "sphinx-book-theme",
    "pydata-sphinx-theme",
    "sqlalchemy",
    "torch",
}

#: One test per supported Python line: "3.11", "3.12", "3.13".
SUPPORTED = tuple(".".join(python.split(".")[:2]) for python in PYTHONS)


def _name(requirement: str) -> str:
    return canonical(requirement.split("==")[0].strip())


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
    after = tools.release.dist.README[tools.release.dist.README.index(heading) :]
    block = re.search(r"\n\n((?: {4}.*\n)+)", after)
    return [line.strip() for line in block.group(1).splitlines()]


def test_guide_and_readme_show_exactly_the_participant_commands():
    assert _guide_block("participant-commands") == tools.release.dist.PARTICIPANT_COMMANDS
    assert _readme_block("Running the notebooks without a network") == tools.release.dist.PARTICIPANT_COMMANDS


def test_participant_requirements_are_small_and_agree_with_the_build_pins():
    participant, build = _pins(REQUIREMENTS), _pins(ROOT / "requirements.txt")
    assert {"numpy", "matplotlib", "myst-nb", "ipykernel", "jupyterlab", "jupyterlab-myst"} <= set(participant)
    assert not TOOLCHAIN & set(participant), TOOLCHAIN & set(participant)
    different = {
        name: (version, build[name])
        for name, version in participant.items()
        if name in build and build[name] != version
    }
    assert not different, f"participant pins differ from requirements.txt: {different}"
    lines = [line.split("#")[0].strip() for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines()]
    assert not [line for line in lines if line.startswith(("-e", "."))], "no editable or local line"
    torch = _pins(ROOT / "requirements-participant-torch.txt")
    assert torch["torch"] == build["torch"]
    different = {
        name: (version, build[name]) for name, version in torch.items() if name in build and build[name] != version
    }
    assert not different, f"torch pins differ from requirements.txt: {different}"
    assert not set(torch) & set(participant), "a package is pinned in both participant files"


def _wheels(target: Target) -> Path:
    """The participant wheels for ``target``, downloaded once per requirements file and target."""
    digest = hashlib.sha256(REQUIREMENTS.read_bytes())
    digest.update(f"{target.platform} {target.python}".encode())
    cache = ROOT / "_build" / "offline-wheels" / digest.hexdigest()[:16]
    if not (cache / ".complete").is_file():
        partial = cache.with_name(cache.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        try:
            download_wheels(partial, ROOT, [target])
        except subprocess.CalledProcessError as error:
            pytest.fail(f"could not download the participant wheels (needs the package registry once): {error}")
        (partial / ".complete").write_text(f"python -m tools.release.wheels for {target}\n")
        shutil.rmtree(cache, ignore_errors=True)
        partial.rename(cache)
    return cache


@pytest.fixture(scope="module")
def bundle_zip(tmp_path_factory) -> tuple[Path, Path]:
    """The participant bundle (a miniature site, one student notebook) and the project's wheel, built once."""
    tmp = tmp_path_factory.mktemp("teacher")
    project = project_wheel(tmp / "project", ROOT)
    html = tmp / "html"
    html.mkdir()
    (html / "index.html").write_text("<html></html>")
    student = tmp / "student"
    student.mkdir()
    index = book_index(ROOT / "notebooks")
    nbformat.write(make_student(nbformat.read(CHAPTER, as_version=4), index), student / CHAPTER.name)
    return tools.release.dist.build_zip(tmp / "dist", root=ROOT, html=html, student=student), project


def test_project_wheel_holds_every_subpackage_and_the_room_settings(bundle_zip):
    _, project = bundle_zip
    with zipfile.ZipFile(project) as wheel:
        names = wheel.namelist()
    packaged = {name.rsplit("/", 1)[0] for name in names if name.endswith("/__init__.py")}
    expected = {
        p.parent.relative_to(ROOT).as_posix()
        for p in (ROOT / "lib").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert expected <= packaged, (
        f"the project's wheel lacks {sorted(expected - packaged)}: pyproject.toml "
        "must list lib's subpackages (setuptools packages.find include lib*)"
    )
    assert any(name.endswith(".data/data/" + OVERRIDES) for name in names), names


def _clean_env(home: Path) -> dict[str, str]:
    """A participant's environment: no pip configuration, no Jupyter state, no PYTHONPATH."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PIP_", "JUPYTER", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(
        HOME=str(home),
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        JUPYTER_PLATFORM_DIRS="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT / ".venv"))
    )
    return env


#: JupyterLab reads the settings an environment overrides from here (the project's wheel puts them there).
OVERRIDES = "share/jupyter/lab/settings/overrides.json"


def _room_settings_hold(venv: Path) -> None:
    """The environment switches JupyterLab's news and update check off, with names its schema knows."""
    overrides = json.loads((venv / OVERRIDES).read_text(encoding="utf-8"))
    for plugin, settings in overrides.items():
        package, name = plugin.split(":")
        schemas = list(venv.glob(f"share/jupyter/lab/schemas/{package}/{name}.json"))
        assert schemas, f"JupyterLab has no settings schema for {plugin}"
        properties = json.loads(schemas[0].read_text(encoding="utf-8"))["properties"]
        for key, value in settings.items():
            assert key in properties, f"{plugin} has no setting {key!r}"
            assert value in properties[key].get("enum", [value]), (plugin, key, value)
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


@pytest.mark.registry
@pytest.mark.parametrize("minor", SUPPORTED)
def test_offline_install_runs_a_student_notebook(minor, bundle_zip, tmp_path):
    found = find_python(minor)
    require(
        None if found else f"No Python {minor} interpreter with venv here (tools.prerequisites.find_python).",
        "The participants' install under it is skipped.",
        "CI must run the participants' install under every supported Python.",
    )
    platform_key = host_platform()
    require(
        None if platform_key else "This machine is not one of the workshop's platforms.",
        "The offline install is skipped.",
        "CI must run the offline install.",
    )
    python, version = found
    wheels = _wheels(Target(platform_key, version))
    zipped, project = bundle_zip
    zipfile.ZipFile(zipped).extractall(tmp_path / "room")
    bundle = tmp_path / "room" / tools.release.dist.NAME
    (bundle / "wheels").mkdir()
    for wheel in [*wheels.glob("*.whl"), project]:
        shutil.copy2(wheel, bundle / "wheels")

    # The participant's side: the guide's commands, as written (this interpreter for python3), but the
    # last (it opens JupyterLab).
    env = _clean_env(tmp_path / "home")
    env["PIP_NO_INDEX"] = "1"
    (tmp_path / "home").mkdir()
    commands = _guide_block("participant-commands")
    assert commands[0].startswith("python3 -m venv") and commands[-1].startswith(".venv/bin/jupyter lab")
    commands[0] = commands[0].replace("python3", python, 1)
    for command in commands[:-1]:
        start = time.perf_counter()
        done = subprocess.run(["bash", "-c", command], cwd=bundle, env=env, capture_output=True, text=True)
        print(f"Python {version}: {command}: {time.perf_counter() - start:.1f} s")
        assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    venv = bundle / ".venv"
    python = venv / "bin" / "python"
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import platform, lib, lib.collectives, myst_nb, jupyterlab_myst; "
            "print(lib.__file__); print(platform.python_version())",
        ],
        cwd=bundle / "student",
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.returncode == 0, where.stderr
    location, running = where.stdout.split()
    assert Path(location).is_relative_to(venv) and running == version, where.stdout
    check = subprocess.run([str(python), "-m", "pip", "check"], env=env, capture_output=True, text=True)
    problems = [
        line
        for line in check.stdout.splitlines()
        if line.strip()
        and not re.match(r"myst-nb [\d.]+ requires ([\w.-]+), which is not installed", line, re.IGNORECASE)
    ]
    omitted = {_name(m) for m in re.findall(r"requires ([\w.-]+), which is not installed", check.stdout)}
    assert not problems, "\n".join(problems)
    assert omitted <= LEFT_OUT, omitted
    specs = subprocess.run(
        [str(venv / "bin" / "jupyter"), "kernelspec", "list", "--json"], env=env, capture_output=True, text=True
    )
    kernel = json.loads(specs.stdout)["kernelspecs"]["python3"]
    assert Path(kernel["resource_dir"]).is_relative_to(venv), kernel
    _room_settings_hold(venv)

    start = time.perf_counter()
    run = subprocess.run(
        [
            str(venv / "bin" / "jupyter"),
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            f"student/{CHAPTER.name}",
            "--output-dir",
            str(tmp_path / "out"),
            "--ExecutePreprocessor.timeout=300",
        ],
        cwd=bundle,
        env=env,
        capture_output=True,
        text=True,
    )
    print(f"Python {version}: executing student/{CHAPTER.name}: {time.perf_counter() - start:.1f} s")
    assert run.returncode == 0, run.stderr[-4000:]
    executed = nbformat.read(tmp_path / "out" / CHAPTER.name, as_version=4)
    outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    assert outputs and not any(o.output_type == "error" for o in outputs)
    print(
        f"wheels: {sum(p.stat().st_size for p in (bundle / 'wheels').iterdir()) / 1e6:.0f} MB, "
        f"{len(list((bundle / 'wheels').glob('*.whl')))} files; .venv {_megabytes(venv):.0f} MB"
    )


def _megabytes(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6
