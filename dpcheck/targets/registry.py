"""All built-in real-library targets, by name ("LIBRARY:NAME").

Each ``dpcheck.targets.<library>_targets`` module lists its targets in ``TARGETS``; modules that
do not exist yet are skipped. Target modules never import their library at import time.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util

from dpcheck.targets.base import TargetError, TargetInfo

MODULES = (
    "dpcheck.targets.diffprivlib_targets",
    "dpcheck.targets.smartnoise_targets",
    "dpcheck.targets.dpmm_targets",
    "dpcheck.targets.synthcity_targets",
    "dpcheck.targets.exact_targets",
    "dpcheck.targets.opacus_target",
)
#: how to get each env's libraries
INSTALL_HINT = {
    "main": "pip install 'dpcheck[real]'",
    "synthcity": "dpcheck env create synthcity",
    "dpmm": "dpcheck env create dpmm",
    "smartnoise": "dpcheck env create smartnoise",
}


def all_targets() -> list[TargetInfo]:
    out: list[TargetInfo] = []
    seen: set[str] = set()
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        for info in getattr(module, "TARGETS", ()):
            if info.name in seen:
                raise TargetError(f"target name {info.name!r} is registered twice")
            seen.add(info.name)
            out.append(info)
    return out


def names() -> list[str]:
    return [t.name for t in all_targets()]


def is_target(name: str) -> bool:
    return any(t.name == name for t in all_targets())


def get(name: str) -> TargetInfo:
    for info in all_targets():
        if info.name == name:
            return info
    raise KeyError(f"unknown target {name!r}; built-in targets: {', '.join(names())}")


def check_available(info: TargetInfo) -> None:
    """Raise :class:`TargetError` naming the install command (main env) or the env command
    (other envs, checked by :func:`dpcheck.targets.remote.check_available`) when a library is missing.
    """
    if info.env != "main":
        try:
            remote = importlib.import_module("dpcheck.targets.remote")
        except ImportError:
            raise TargetError(f"{info.name} runs in the {info.env!r} env: {INSTALL_HINT[info.env]}") from None
        check = getattr(remote, "check_available", None)
        if callable(check):
            check(info)
        return
    missing = [m for m in info.requires if importlib.util.find_spec(m) is None]
    if missing:
        raise TargetError(f"{info.name} needs {', '.join(missing)}, which is not installed: "
                          f"{INSTALL_HINT['main']}")


def library_version(info: TargetInfo) -> str | None:
    """The installed version of the target's library (main env only; None when unknown)."""
    if info.env != "main":
        try:
            remote = importlib.import_module("dpcheck.targets.remote")
        except ImportError:
            return None
        getter = getattr(remote, "library_version", None)
        try:
            return getter(info) if callable(getter) else None
        except Exception:  # noqa: BLE001 - a version is informational only
            return None
    try:
        return importlib.metadata.version(info.library)
    except importlib.metadata.PackageNotFoundError:
        return None
