"""A reader that stops early (``dpcheck rules | head -1``) is not an internal error."""
from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("argv", [["rules"], ["explain", "DP202"]])
def test_closed_stdout_exits_141_quietly(argv: list[str]) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "dpcheck", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before dpcheck writes a byte
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "internal error" not in err, err


def test_open_stdout_still_exits_0() -> None:
    done = subprocess.run([sys.executable, "-m", "dpcheck", "rules"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "DP202" in done.stdout


def test_broken_pipe_that_is_not_stdout_is_an_internal_error(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from dpcheck import cli
    from dpcheck.commands import rules

    def run(args: object) -> int:
        raise BrokenPipeError("a pipe to a worker")

    monkeypatch.setattr(rules, "run", run)
    assert cli.main(["rules"]) == 2
    assert "internal error" in capsys.readouterr().err
