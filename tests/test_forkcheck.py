"""benchmarks/forkcheck.py: a copy of an avoided repository is rejected, unrelated code is not."""
from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.spec_from_file_location("forkcheck_bench", _ROOT / "benchmarks" / "forkcheck.py")
assert _SPEC is not None and _SPEC.loader is not None
fc = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fc)

BODY = "def step(x):\n    return x + 1\n" * 120  # well above MIN_SIZE


def _mirror(mirrors: Path, repo: str, files: dict[str, str], layout: str = "bare") -> None:
    work = mirrors / "_work" / repo.replace("/", "+")
    work.mkdir(parents=True)
    for name, text in files.items():
        (work / name).write_text(text)
    run = lambda *a: subprocess.run(["git", *a], cwd=work, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    dest = mirrors / repo.replace("/", "+", 1)
    if layout == "bare":
        subprocess.run(["git", "clone", "-q", "--bare", str(work), str(dest / "repo")], check=True)
    else:  # a work tree whose git directory is repo/.git
        subprocess.run(["git", "clone", "-q", str(work), str(dest / "repo")], check=True)


def test_copy_rejected_unrelated_kept_and_own_files_ignored(tmp_path: Path) -> None:
    mirrors = tmp_path / "m"
    _mirror(mirrors, "orig/FedDP", {"a.py": BODY, "b.py": BODY + "# b\n", "c.py": BODY + "# c\n"})
    _mirror(mirrors, "other/FedDP", {"a.py": BODY, "b.py": BODY + "# b\n", "new.py": BODY + "# n\n"},
            layout="worktree")
    _mirror(mirrors, "someone/unrelated", {"a.py": BODY + "# mine\n", "tiny.py": "x = 1\n"})
    avoid = tmp_path / "avoid.txt"
    avoid.write_text("orig/FedDP\n")
    index_file = tmp_path / "ix.json"
    assert fc.main(["--mirrors", str(mirrors), "index", "--avoid", str(avoid), "--out", str(index_file)]) == 0
    index = json.loads(index_file.read_text())
    assert fc.verdict(mirrors, "other/FedDP", index) == (3, {"orig/feddp": 2}, True)
    assert fc.main(["--mirrors", str(mirrors), "check", "other/FedDP", "--index", str(index_file)]) == 1
    assert fc.main(["--mirrors", str(mirrors), "check", "someone/unrelated", "--index", str(index_file)]) == 0
    # an avoided repository is not its own copy
    assert fc.verdict(mirrors, "orig/FedDP", index)[2] is False


def test_missing_mirror_is_a_clear_error(tmp_path: Path, capsys) -> None:
    index_file = tmp_path / "ix.json"
    index_file.write_text("{}")
    assert fc.main(["--mirrors", str(tmp_path), "check", "no/such", "--index", str(index_file)]) == 2
    assert "no mirror of no/such" in capsys.readouterr().err
