"""Separate virtualenvs for targets whose library conflicts with dpcheck's own environment.

Each env is defined by a pinned requirements file next to this module (``NAME.txt``) and lives
under ``$DPCHECK_ENV_DIR/NAME`` (default ``~/.cache/dpcheck/envs/NAME``). Creating one makes the
venv, installs the file with pip and installs dpcheck itself without dependencies, so the worker
(:mod:`dpcheck.targets.worker`) imports the same ``dpcheck.targets`` code as the caller.

A requirements file may start with directive comments:

- ``# dpcheck: no-deps`` — install with ``pip --no-deps`` (the file is then a complete lock);
- ``# dpcheck: check-import MODULE`` — after installing, ``import MODULE`` must work.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dpcheck
from dpcheck.targets.envs.pipconfig import pip_index_options

HERE = Path(__file__).resolve().parent
MARKER = "dpcheck-env.json"
LOG = "create.log"
TAIL_LINES = 25

Progress = Callable[[str], None]


class EnvError(RuntimeError):
    """An env cannot be created or used; the message says why and what to run."""


def env_root() -> Path:
    configured = os.environ.get("DPCHECK_ENV_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "dpcheck" / "envs"


def known_envs() -> list[str]:
    """Env names that have a requirements file."""
    return sorted(p.stem for p in HERE.glob("*.txt"))


def requirements_file(name: str) -> Path:
    path = HERE / f"{name}.txt"
    if not path.is_file():
        raise EnvError(f"no env named {name!r}; known envs: {', '.join(known_envs()) or 'none'}")
    return path


def env_path(name: str) -> Path:
    return env_root() / name


def env_python(name: str) -> Path:
    return env_path(name) / "bin" / "python"


@dataclass(frozen=True)
class Directives:
    no_deps: bool
    check_imports: tuple[str, ...]


def directives(requirements: Path) -> Directives:
    no_deps, checks = False, []
    for line in requirements.read_text().splitlines():
        text = line.strip()
        if not text.startswith("# dpcheck:"):
            continue
        words = text[len("# dpcheck:"):].split()
        if words[:1] == ["no-deps"]:
            no_deps = True
        elif words[:1] == ["check-import"] and len(words) == 2:
            checks.append(words[1])
    return Directives(no_deps, tuple(checks))


def fingerprint(requirements: Path) -> str:
    return hashlib.sha256(requirements.read_bytes()).hexdigest()[:16]


def marker(name: str) -> dict | None:
    path = env_path(name) / MARKER
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def is_ready(name: str, requirements: Path | None = None) -> bool:
    """The env exists, its python runs, and it was built from the current requirements."""
    requirements = requirements or requirements_file(name)
    info = marker(name)
    return bool(info and info.get("requirements") == fingerprint(requirements) and env_python(name).exists())


def dpcheck_source() -> Path | None:
    """The checkout dpcheck runs from (editable installs), or None for an installed copy."""
    root = Path(dpcheck.__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() else None


def create(name: str, *, requirements: Path | None = None, force: bool = False,
           progress: Progress = print, verbose: bool = False) -> Path:
    """Create (or bring up to date) env ``name``; returns its directory. Idempotent."""
    requirements = requirements or requirements_file(name)
    path = env_path(name)
    if not force and is_ready(name, requirements):
        info = marker(name) or {}
        if info.get("dpcheck_source") != str(dpcheck_source() or ""):
            # same libraries, but dpcheck now runs from another checkout (a new CI clone)
            progress(f"env {name}: reinstalling dpcheck from {dpcheck_source() or 'this installation'}")
            log = path / LOG
            install_dpcheck(env_python(name), log, verbose)
            info["dpcheck_source"] = str(dpcheck_source() or "")
            (path / MARKER).write_text(json.dumps(info, indent=2))
        progress(f"env {name}: up to date at {path}")
        return path
    if force and path.exists():
        progress(f"env {name}: removing {path}")
        shutil.rmtree(path)
    start = time.monotonic()
    path.parent.mkdir(parents=True, exist_ok=True)
    (path / MARKER).unlink(missing_ok=True)  # a half-updated env is not ready
    log = path.parent / f"{name}.{LOG}"
    log.write_text("")
    spec = directives(requirements)
    python = env_python(name)

    if not python.exists():
        progress(f"env {name}: [1/4] creating virtualenv {path}")
        _run([sys.executable, "-m", "venv", str(path)], log, "creating the virtualenv", verbose)
    else:
        progress(f"env {name}: [1/4] virtualenv exists at {path}")
    install_requirements(name, python, requirements, spec, log, progress, verbose)
    progress(f"env {name}: [3/4] installing dpcheck (no dependencies)")
    install_dpcheck(python, log, verbose)
    progress(f"env {name}: [4/4] checking imports: {', '.join(('dpcheck.targets.worker',) + spec.check_imports)}")
    for module in ("dpcheck.targets.worker",) + spec.check_imports:
        _run([str(python), "-c", f"import {module}"], log, f"importing {module} in the new env", verbose)
    seconds = time.monotonic() - start
    (path / MARKER).write_text(json.dumps({
        "name": name, "requirements": fingerprint(requirements), "requirements_file": str(requirements),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(seconds, 1),
        "dpcheck_source": str(dpcheck_source() or ""),
    }, indent=2))
    shutil.move(str(log), str(path / LOG))
    progress(f"env {name}: ready in {seconds:.0f} s, {human_size(dir_size(path))} at {path}")
    return path


def install_requirements(name: str, python: Path, requirements: Path, spec: Directives, log: Path,
                         progress: Progress, verbose: bool) -> None:
    """Install the pinned file with uv (given pip's index configuration), else with pip.

    uv resolves against the same indexes and find-links folders as pip on this machine; should
    it still fail, pip is tried before giving up, so an env builds wherever ``pip install`` works.
    """
    tail = ["-r", str(requirements)] + (["--no-deps"] if spec.no_deps else [])
    what = f"installing {requirements.name}"
    step = f"install -r {requirements.name}{' --no-deps' if spec.no_deps else ''} (log: {log})"
    uv = find_uv()
    if uv:
        progress(f"env {name}: [2/4] uv pip {step}")
        try:
            _run([uv, "pip", "install", "--python", str(python)] + pip_index_options().uv_args() + tail,
                 log, what + " with uv", verbose)
            return
        except EnvError:
            progress(f"env {name}: uv failed (see {log}); trying pip")
    else:
        progress(f"env {name}: [2/4] pip {step}")
    try:
        _run([str(python), "-m", "pip", "install", "--progress-bar", "off"] + tail, log, what + " with pip",
             verbose)
    except EnvError as exc:
        raise EnvError(f"{exc}\nCheck that `pip install -r {requirements}` works on this machine "
                       "(network or package index reachable, pip's index configuration), then run "
                       f"`dpcheck env create {name} --force --verbose`.") from None


def find_uv() -> str | None:
    """uv, when installed (next to this Python or on PATH), unless ``DPCHECK_ENV_INSTALLER=pip``.

    uv installs the synthcity lock in about 1.5 min where pip took 17 min here (pip unpacks the
    6.7 GB serially); both install exactly the pinned files.
    """
    choice = os.environ.get("DPCHECK_ENV_INSTALLER", "auto")
    if choice == "pip":
        return None
    if choice not in ("auto", "uv"):
        raise EnvError(f"DPCHECK_ENV_INSTALLER={choice!r}: use auto, uv or pip")
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else shutil.which("uv")


def install_dpcheck(python: Path, log: Path, verbose: bool) -> None:
    source = dpcheck_source()
    if source is not None:
        _run([str(python), "-m", "pip", "install", "--no-deps", "--progress-bar", "off", "-e", str(source)],
             log, "installing dpcheck (editable, --no-deps)", verbose)
        return
    # an installed copy (no checkout to point pip at): copy the package into the env
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    target = Path(site) / "dpcheck"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(Path(dpcheck.__file__).resolve().parent, target,
                    ignore=shutil.ignore_patterns("__pycache__"))


def remove(name: str, progress: Progress = print) -> bool:
    path = env_path(name)
    if not path.exists():
        progress(f"env {name}: not present at {path}")
        return False
    shutil.rmtree(path)
    progress(f"env {name}: removed {path}")
    return True


def _run(cmd: list[str], log: Path, what: str, verbose: bool) -> None:
    with log.open("a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            if verbose:
                print(f"    {line}", end="", flush=True)
        code = proc.wait()
    if code != 0:
        tail = log.read_text().splitlines()[-TAIL_LINES:]
        raise EnvError(f"{what} failed (exit {code}); last lines of {log}:\n" + "\n".join(tail))


def dir_size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def human_size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"
