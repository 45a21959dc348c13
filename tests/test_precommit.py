"""The pre-commit hook for real: the ``pre-commit`` tool installs dpcheck from a git copy of this
checkout into its own environment, refuses a commit that adds a DP101 bug and accepts a clean one.

Slow: pre-commit pip-installs dpcheck and its dependencies into a fresh virtualenv.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: what ``pip install`` of the hook repository needs (setup.py maps these folders into dpcheck)
NEEDED = ("pyproject.toml", "setup.py", "README.md", ".pre-commit-hooks.yaml",
          "dpcheck", "rules", "vendored_impls", "property_tests")

BUGGY = '''import math


def gaussian_sigma(epsilon: float, delta: float) -> float:
    return math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def variance(epsilon: float, delta: float) -> float:
    sigma = gaussian_sigma(epsilon, delta)
    return sigma ^ 2
'''
CLEAN = BUGGY.replace("^ 2", "** 2")


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        PRE_COMMIT_HOME=str(home / "pre-commit-cache"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="dpcheck test", GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="dpcheck test", GIT_COMMITTER_EMAIL="test@example.invalid",
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    # keep pip's download cache between runs (the isolated HOME would otherwise start empty)
    env.setdefault("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _source_files() -> list[Path]:
    """The checkout's tracked and untracked (not ignored) files under NEEDED."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "--", *NEEDED], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    return [Path(p) for p in listed if (ROOT / p).is_file()]


def _hook_repository(target: Path, env: dict[str, str]) -> str:
    """A git repository holding a snapshot of this working tree; returns its commit sha."""
    files = _source_files()
    assert Path(".pre-commit-hooks.yaml") in files and Path("setup.py") in files
    for rel in files:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target / rel)
    for args in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "snapshot"]):
        done = _run(args, target, env)
        assert done.returncode == 0, done.stderr
    return _run(["git", "rev-parse", "HEAD"], target, env).stdout.strip()


@pytest.mark.slow
def test_hook_refuses_dp101_commit_and_accepts_clean_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _git_env(home)
    hooks, project = tmp_path / "dpcheck-hooks", tmp_path / "project"
    hooks.mkdir()
    project.mkdir()
    rev = _hook_repository(hooks, env)

    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: dpcheck\n"
    )
    (project / "README.txt").write_text("not python: the hook must not look at it ^ 2\n")
    for args in (["git", "init", "-q"], [sys.executable, "-m", "pre_commit", "install"]):
        done = _run(args, project, env)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (project / ".git" / "hooks" / "pre-commit").is_file()

    (project / "calibration.py").write_text(BUGGY)
    _run(["git", "add", "-A"], project, env)
    refused = _run(["git", "commit", "-m", "add calibration"], project, env, timeout=1800)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert "DP101" in output and "calibration.py:10" in output, output
    assert _run(["git", "rev-parse", "--verify", "-q", "HEAD"], project, env).returncode != 0  # nothing committed

    (project / "calibration.py").write_text(CLEAN)
    _run(["git", "add", "-A"], project, env)
    accepted = _run(["git", "commit", "-m", "add calibration"], project, env, timeout=600)
    output = accepted.stdout + accepted.stderr
    assert accepted.returncode == 0, output
    assert "dpcheck (differential-privacy lint)" in output and "Passed" in output, output
    committed = _run(["git", "show", "--name-only", "--format=", "HEAD"], project, env).stdout.split()
    assert sorted(committed) == [".pre-commit-config.yaml", "README.txt", "calibration.py"]
