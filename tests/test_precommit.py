"""The pre-commit configurations of docs/ci.md, as written, with the real ``pre-commit`` tool:

* the pinned commit exists in this repository and carries the hook (fast);
* the ``repo: local`` block refuses a commit that adds a DP101 bug and accepts the fix (fast: it
  runs the dpcheck of this environment; no clone, no network);
* the pinned-commit block, with ``repo:`` pointed at this checkout, does the same (slow: pre-commit
  pip-installs dpcheck at that commit into a fresh virtualenv).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ci.md"

BUGGY = '''import math


def gaussian_sigma(epsilon: float, delta: float) -> float:
    if not 0 < epsilon < 1:
        raise ValueError("the classical Gaussian mechanism needs 0 < epsilon < 1")
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


def _doc_configs() -> list[dict]:
    """The ``.pre-commit-config.yaml`` blocks of docs/ci.md (YAML blocks with a top-level ``repos``)."""
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    configs = [yaml.safe_load(b) for b in blocks]
    return [c for c in configs if isinstance(c, dict) and "repos" in c]


def _doc_config(local: bool) -> dict:
    found = [c for c in _doc_configs() if (c["repos"][0]["repo"] == "local") == local]
    assert len(found) == 1, f"docs/ci.md should show one {'local' if local else 'pinned'} configuration"
    return found[0]


def test_documented_revision_exists_and_carries_the_hook() -> None:
    repo = _doc_config(local=False)["repos"][0]
    rev = str(repo["rev"])
    assert re.fullmatch(r"[0-9a-f]{40}", rev), f"pin a full commit sha (there are no tags): {rev!r}"
    exists = subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True)
    assert exists.returncode == 0, f"{rev} is not a commit of this repository"
    hooks = subprocess.run(["git", "show", f"{rev}:.pre-commit-hooks.yaml"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout
    assert [h["id"] for h in yaml.safe_load(hooks)] == [h["id"] for h in repo["hooks"]] == ["dpcheck"]


def test_local_block_matches_the_shipped_hook() -> None:
    [shipped] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    [local] = _doc_config(local=True)["repos"][0]["hooks"]
    for key in ("id", "name", "entry", "types", "require_serial"):
        assert local[key] == shipped[key], key


def _commit_twice(project: Path, config: dict, env: dict[str, str], install_timeout: float) -> None:
    """pre-commit installed from ``config``: the DP101 commit is refused, the fixed one accepted."""
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (project / "README.txt").write_text("not python: the hook must not look at it ^ 2\n")
    for args in (["git", "init", "-q"], [sys.executable, "-m", "pre_commit", "install"]):
        done = _run(args, project, env)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (project / ".git" / "hooks" / "pre-commit").is_file()

    (project / "calibration.py").write_text(BUGGY)
    _run(["git", "add", "-A"], project, env)
    refused = _run(["git", "commit", "-m", "add calibration"], project, env, timeout=install_timeout)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    # the lines docs/ci.md shows
    assert "dpcheck (differential-privacy lint)" in output and "Failed" in output, output
    assert "calibration.py:12:12: DP101 `sigma ^ 2` is bitwise XOR, not exponentiation" in output, output
    assert _run(["git", "rev-parse", "--verify", "-q", "HEAD"], project, env).returncode != 0  # nothing committed

    (project / "calibration.py").write_text(CLEAN)
    _run(["git", "add", "-A"], project, env)
    accepted = _run(["git", "commit", "-m", "add calibration"], project, env, timeout=600)
    output = accepted.stdout + accepted.stderr
    assert accepted.returncode == 0, output
    assert "dpcheck (differential-privacy lint)" in output and "Passed" in output, output
    committed = _run(["git", "show", "--name-only", "--format=", "HEAD"], project, env).stdout.split()
    assert sorted(committed) == [".pre-commit-config.yaml", "README.txt", "calibration.py"]


def test_local_hook_refuses_dp101_commit_and_accepts_the_fix(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    _commit_twice(project, _doc_config(local=True), _git_env(home), install_timeout=300)


@pytest.mark.slow
def test_pinned_commit_hook_refuses_dp101_commit_and_accepts_the_fix(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    config = _doc_config(local=False)
    config["repos"][0]["repo"] = str(ROOT)  # "a local clone's path": this checkout holds the pinned commit
    _commit_twice(project, config, _git_env(home), install_timeout=1800)
