"""Targets behind a process boundary (dpcheck.targets.remote / worker / wire) and `dpcheck env`."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcheck.cli import main
from dpcheck.targets import envs, remote, wire
from dpcheck.targets.base import Column, Schema, TargetError, TargetInfo, shadow_release

TOYS = '''
import os, sys, time
import numpy as np

class Noisy:
    """Prints to stdout from Python and straight to fd 1, then releases a noisy count."""
    def release(self, data, *, schema, epsilon, delta, seed, **knobs):
        print("library chatter " * 50)
        sys.stdout.flush()
        os.write(1, bytes(range(256)))
        total = float(data["a"].sum())
        return np.array([total + np.random.laplace(scale=1.0 / epsilon), float(len(data)),
                         float(np.__version__.split(".")[0])])

class Copy:
    """A synthesizer that samples rows of its data with the global numpy RNG."""
    def fit(self, data, *, schema, epsilon, delta, seed, **knobs):
        self.data = data
    def sample(self, n):
        return self.data.iloc[np.random.randint(0, len(self.data), size=n)].reset_index(drop=True)

class Dies:
    def release(self, data, **kw):
        print("about to die", file=sys.stderr, flush=True)
        os._exit(7)

class Raises:
    def release(self, data, **kw):
        raise ValueError("toy target refuses this input")

class Sleeps:
    def release(self, data, **kw):
        time.sleep(60)
        return np.zeros(1)

class BadOutput:
    """A synthesizer whose rows lack the schema's columns: a TargetError in the worker."""
    def fit(self, data, **kw):
        pass
    def sample(self, n):
        import pandas as pd
        return pd.DataFrame({"other": range(n)})

class Pid:
    def release(self, data, **kw):
        return np.array([float(os.getpid())])
'''

SCHEMA = Schema((Column("a", "integer", lower=0, upper=1), Column("b", "categorical", categories=("x", "y")),
                 Column("c", "continuous", lower=0.0, upper=1.0)))
DATA = pd.DataFrame({"a": [0, 1, 1, 0], "b": ["x", "y", "x", "y"], "c": [0.25, 0.5, float("nan"), 1.0]})


def toy(name: str, env: str = "main", kind: str = "mechanism") -> TargetInfo:
    return TargetInfo(name=f"toy:{name}", library="numpy", kind=kind, env=env, factory=f"remote_toys:{name}")


@pytest.fixture
def toys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Toy targets importable by the worker (through PYTHONPATH), fresh workers before and after."""
    (tmp_path / "remote_toys.py").write_text(textwrap.dedent(TOYS))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path))
    remote.shutdown_workers()
    yield tmp_path
    remote.shutdown_workers()
    sys.modules.pop("remote_toys", None)


def test_library_prints_do_not_corrupt_the_protocol_and_match_in_process(toys: Path) -> None:
    info = toy("Noisy")
    first = remote.remote_shadow_release(info, DATA, SCHEMA, 1.0, 0.0, seed=11, n_samples=1)
    again = remote.remote_shadow_release(info, DATA, SCHEMA, 1.0, 0.0, seed=11, n_samples=1)
    other = remote.remote_shadow_release(info, DATA, SCHEMA, 1.0, 0.0, seed=12, n_samples=1)
    local = shadow_release(info, DATA, SCHEMA, 1.0, 0.0, seed=11, n_samples=1)
    np.testing.assert_array_equal(first, local)
    np.testing.assert_array_equal(first, again)
    assert first[0] != other[0]
    assert first[1] == len(DATA)


def test_synthesizer_rows_come_back_in_schema_order(toys: Path) -> None:
    out = remote.remote_shadow_release(toy("Copy", kind="synthesizer"), DATA, SCHEMA, 1.0, 0.0, seed=3, n_samples=50)
    assert out.shape == (50, 3)
    np.testing.assert_array_equal(out, shadow_release(toy("Copy", kind="synthesizer"), DATA, SCHEMA, 1.0, 0.0, 3, 50))
    assert set(out[:, 1]) <= {0.0, 1.0}  # categories as codes


def test_a_dying_worker_gives_a_clear_error_and_is_restarted(toys: Path) -> None:
    before = remote.remote_shadow_release(toy("Pid"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=1)
    with pytest.raises(TargetError) as err:
        remote.remote_shadow_release(toy("Dies"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=1)
    text = str(err.value)
    assert "died" in text and "exit code 7" in text and "about to die" in text and "toy:Dies" in text
    after = remote.remote_shadow_release(toy("Pid"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=1)
    assert after[0] != before[0]  # a new worker process


def test_a_raising_target_brings_back_the_worker_traceback(toys: Path) -> None:
    pid = remote.remote_shadow_release(toy("Pid"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=1)
    with pytest.raises(remote.RemoteError) as err:
        remote.remote_shadow_release(toy("Raises"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=1)
    assert err.value.error_type == "ValueError"
    assert not isinstance(err.value, TargetError)  # the library failed this run: not a set-up error
    assert "toy target refuses this input" in str(err.value)
    assert "remote_toys.py" in err.value.remote_traceback
    same = remote.remote_shadow_release(toy("Pid"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=1)
    assert same[0] == pid[0]  # an exception does not cost the worker


def test_a_target_error_in_the_worker_stays_a_target_error(toys: Path) -> None:
    with pytest.raises(remote.RemoteTargetError, match="lacks schema columns") as err:
        remote.remote_shadow_release(toy("BadOutput", kind="synthesizer"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=3)
    assert isinstance(err.value, TargetError) and "base.py" in err.value.remote_traceback


def test_a_run_past_its_timeout_kills_the_worker_and_the_next_run_works(toys: Path) -> None:
    with pytest.raises(TargetError, match="took longer than 1 s"):
        remote.remote_shadow_release(toy("Sleeps"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=1, timeout=1.0)
    out = remote.remote_shadow_release(toy("Noisy"), DATA, SCHEMA, 1.0, 0.0, seed=5, n_samples=1)
    assert out[1] == len(DATA)


def test_missing_env_names_the_create_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPCHECK_ENV_DIR", str(tmp_path))
    with pytest.raises(TargetError, match="dpcheck env create synthcity"):
        remote.remote_shadow_release(toy("Noisy", env="synthcity"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=1)


def test_check_available_reports_modules_the_env_lacks(toys: Path) -> None:
    info = TargetInfo(name="toy:Needs", library="numpy", kind="mechanism", env="main", factory="remote_toys:Pid",
                      requires=("numpy", "surely_not_a_module_xyz"))
    assert remote.missing_modules(info) == ["surely_not_a_module_xyz"]
    with pytest.raises(TargetError, match="surely_not_a_module_xyz"):
        remote.check_available(info)
    assert remote.library_version(info) == np.__version__


def test_frames_and_data_round_trip() -> None:
    frame = wire.frame_to_json(DATA)
    back = wire.frame_from_json(frame)
    assert list(back.columns) == list(DATA.columns)
    assert back["a"].tolist() == [0, 1, 1, 0] and back["b"].tolist() == ["x", "y", "x", "y"]
    assert math.isnan(back["c"][2]) and back["c"][3] == 1.0
    array = np.arange(6, dtype=float).reshape(2, 3)
    np.testing.assert_array_equal(wire.array_from_bytes(wire.array_to_bytes(array)), array)
    read, write = os.pipe()
    os.write(write, wire.pack({"op": "x", "n": 1}, b"blob") + wire.pack({"op": "y"}))
    reader = wire.FdReader(read)
    assert reader.read_frame(timeout=1.0) == ({"op": "x", "n": 1}, b"blob")
    assert reader.read_frame(timeout=1.0) == ({"op": "y"}, b"")
    with pytest.raises(wire.TimeoutError_):
        reader.read_frame(timeout=0.05)
    os.close(write)
    with pytest.raises(wire.ClosedError):
        reader.read_frame(timeout=1.0)
    os.close(read)


# --- dpcheck env --------------------------------------------------------------------------------

def test_env_cli_path_list_and_unknown_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DPCHECK_ENV_DIR", str(tmp_path))
    assert "synthcity" in envs.known_envs()
    assert main(["env", "path", "synthcity"]) == 1  # not created yet
    assert capsys.readouterr().out.strip() == str(tmp_path / "synthcity")
    assert main(["env", "list"]) == 0
    listing = capsys.readouterr().out
    assert "synthcity" in listing and "absent" in listing
    assert main(["env", "create", "no-such-env"]) == 2
    assert "known envs" in capsys.readouterr().err
    assert main(["env", "remove", "synthcity"]) == 0
    assert "not present" in capsys.readouterr().out


@pytest.mark.parametrize("installer", ["pip", "auto"])  # auto: uv when installed
def test_pip_failure_exits_2_with_the_tail_of_pips_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           installer: str) -> None:
    monkeypatch.setenv("DPCHECK_ENV_DIR", str(tmp_path))
    monkeypatch.setenv("DPCHECK_ENV_INSTALLER", installer)
    bad = tmp_path / "bad.txt"
    bad.write_text("numpy ==== not a version\n")
    with pytest.raises(envs.EnvError) as err:
        envs.create("bad", requirements=bad, progress=lambda _: None)
    assert "failed (exit" in str(err.value) and "numpy ==== not a version" in str(err.value)
    assert not envs.is_ready("bad", bad)


# --- a target in a really different virtualenv (numpy 1.26 there, numpy 2 here) -----------------

SCRATCH_REQUIREMENTS = "# dpcheck: check-import pandas\nnumpy==1.26.4\npandas==2.2.3\n"


@pytest.fixture(scope="session")
def scratch_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("envs")
    requirements = root / "scratch.txt"
    requirements.write_text(SCRATCH_REQUIREMENTS)
    old = os.environ.get("DPCHECK_ENV_DIR")
    os.environ["DPCHECK_ENV_DIR"] = str(root)
    try:
        messages: list[str] = []
        envs.create("dpmm", requirements=requirements, progress=messages.append)
        assert any("ready in" in m for m in messages)
        envs.create("dpmm", requirements=requirements, progress=messages.append)
        assert messages[-1].startswith("env dpmm: up to date")  # idempotent: nothing reinstalled
        marker = envs.env_path("dpmm") / envs.MARKER
        marker.write_text(marker.read_text().replace(str(envs.dpcheck_source()), "/an/old/ci/clone"))
        envs.create("dpmm", requirements=requirements, progress=messages.append)
        assert "reinstalling dpcheck" in messages[-2]  # a new checkout: only dpcheck is reinstalled
        assert envs.marker("dpmm")["dpcheck_source"] == str(envs.dpcheck_source())
    finally:
        if old is None:
            os.environ.pop("DPCHECK_ENV_DIR")
        else:
            os.environ["DPCHECK_ENV_DIR"] = old
    return root


@pytest.mark.slow
def test_a_target_in_another_virtualenv(scratch_env: Path, toys: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPCHECK_ENV_DIR", str(scratch_env))
    python = envs.env_python("dpmm")
    version = subprocess.run([str(python), "-c", "import numpy; print(numpy.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version == "1.26.4"
    info = toy("Noisy", env="dpmm")
    out = remote.remote_shadow_release(info, DATA, SCHEMA, 1.0, 0.0, seed=11, n_samples=1)
    assert out[2] == 1.0  # numpy 1.x answered
    # the legacy Laplace stream is the same in numpy 1.26 and 2.x: the runs agree across envs
    np.testing.assert_array_equal(out[:2], shadow_release(info, DATA, SCHEMA, 1.0, 0.0, 11, 1)[:2])
    synth = remote.remote_shadow_release(toy("Copy", env="dpmm", kind="synthesizer"), DATA, SCHEMA, 1.0, 0.0,
                                         seed=4, n_samples=20)
    assert synth.shape == (20, 3)
    assert remote.library_version(info) == "1.26.4"
    with pytest.raises(TargetError, match="died"):
        remote.remote_shadow_release(toy("Dies", env="dpmm"), DATA, SCHEMA, 1.0, 0.0, seed=1, n_samples=1)
    again = remote.remote_shadow_release(info, DATA, SCHEMA, 1.0, 0.0, seed=11, n_samples=1)
    np.testing.assert_array_equal(again, out)
