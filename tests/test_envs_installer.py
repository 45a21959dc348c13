"""Target envs resolve what pip resolves: uv gets pip's index configuration."""
from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from dpcheck.targets import envs
from dpcheck.targets.envs.pipconfig import index_options, parse_config_list

CONFIG = """global.cert='/etc/ssl/certs/ca-certificates.crt'
global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'
global.find-links='/opt/wheels'
global.constraint='/etc/pip/constraints.txt'
user.index-url='https://mirror.example/simple'
:env:.find-links='/opt/wheels /srv/more'
"""


def test_config_list_is_parsed_per_scope() -> None:
    scopes = parse_config_list(CONFIG)
    assert scopes["global"]["extra-index-url"] == "file:///opt/a/simple file:///opt/b/simple"
    assert scopes[":env:"]["find-links"] == "/opt/wheels /srv/more"
    assert scopes["user"]["index-url"] == "https://mirror.example/simple"


def test_uv_gets_every_location_pip_searches() -> None:
    args = index_options(CONFIG, env={}).uv_args()
    pairs = list(zip(args, args[1:]))
    assert ("--index-url", "https://mirror.example/simple") in pairs
    assert ("--extra-index-url", "file:///opt/a/simple") in pairs
    assert ("--extra-index-url", "file:///opt/b/simple") in pairs
    assert [v for k, v in pairs if k == "--find-links"] == ["/opt/wheels", "/srv/more"]
    assert ("--constraint", "/etc/pip/constraints.txt") in pairs
    # pip takes the best version over all locations; uv's default stops at the first index
    assert ("--index-strategy", "unsafe-best-match") in pairs


def test_environment_variables_override_files() -> None:
    opts = index_options(CONFIG, env={"index-url": "https://other/simple", "no-index": "1"})
    assert opts.index_url == "https://other/simple"
    assert opts.no_index and opts.uv_args()[0] == "--no-index"


def test_no_configuration_adds_nothing() -> None:
    assert index_options("", env={}).uv_args() == []


def _local_wheel(folder: Path, name: str, version: str) -> Path:
    """A pure-Python wheel with a local version label, like the machine's ``torch==…+cpu``."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f"VERSION = {version!r}\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: dpcheck-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


def test_a_wheel_only_pip_config_can_reach_installs_into_an_env(tmp_path: Path, monkeypatch) -> None:
    uv = envs.find_uv()
    assert uv, "uv is installed by the dev set-up (scripts/ci_envs.sh); the env installer relies on it"
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _local_wheel(wheels, "dpchecklocalpkg", "1.0+cpu")
    requirements = tmp_path / "req.txt"
    requirements.write_text("# dpcheck: no-deps\ndpchecklocalpkg==1.0+cpu\n")
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # the wheel is reachable only through pip's configuration, as /opt/wheels is on these machines
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uvcache"))
    steps: list[str] = []
    log = tmp_path / "create.log"
    envs.install_requirements("t", python, requirements, envs.directives(requirements), log, steps.append, False)
    assert not any("trying pip" in s for s in steps), log.read_text()
    out = subprocess.run([str(python), "-c", "import dpchecklocalpkg; print(dpchecklocalpkg.VERSION)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "1.0+cpu"


def test_an_unresolvable_file_says_what_to_do(tmp_path: Path, monkeypatch) -> None:
    requirements = tmp_path / "req.txt"
    requirements.write_text("dpcheck-no-such-package-anywhere==9.9\n")
    venv = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uvcache"))
    with pytest.raises(envs.EnvError, match="dpcheck env create t --force --verbose"):
        envs.install_requirements("t", venv / "bin" / "python", requirements, envs.directives(requirements),
                                  tmp_path / "create.log", lambda _m: None, False)


def test_an_unknown_installer_choice_is_refused(monkeypatch) -> None:
    monkeypatch.setenv("DPCHECK_ENV_INSTALLER", "conda")
    with pytest.raises(envs.EnvError, match="auto, uv or pip"):
        envs.find_uv()
