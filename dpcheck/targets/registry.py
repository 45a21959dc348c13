"""All built-in real-library targets, by name ("LIBRARY:NAME").

Each ``dpcheck.targets.<library>_targets`` module lists its targets in ``TARGETS``; modules that
do not exist yet are skipped. Target modules never import their library at import time.
"""
from __future__ import annotations

import difflib
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
    raise KeyError(f"unknown target {name!r};{suggestion(name, names())}")


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


#: the group names ``--impl`` accepts besides single names
GROUPS = ("all", "buggy", "twins", "real")


def known_names() -> list[str]:
    """Every name ``--impl`` resolves: groups, the built-in implementations, the reference
    mechanisms of ``dpcheck audit`` and the real-library targets."""
    from dpcheck import impls

    try:
        from dpcheck.audit.reference.mechanisms import REFERENCE
        reference = list(REFERENCE)
    except ImportError:  # the audit extra is not installed
        reference = []
    return list(dict.fromkeys([*GROUPS, *impls.NAMES, *reference, *names()]))


def closest(name: str, candidates: list[str], n: int = 3) -> list[str]:
    """The candidates most like ``name`` (difflib, case-insensitive), best first. A ``LIBRARY:NAME``
    of a known library is compared with that library's targets by the part after ':'; a bare name
    also with the targets' parts after ':' (``GaussianNB`` finds ``diffprivlib:GaussianNB``)."""
    library, colon, rest = name.lower().partition(":")
    same = [c for c in candidates if c.lower().startswith(library + ":")] if colon else []
    keys: dict[str, list[str]] = {}
    if same:
        for c in same:
            keys.setdefault(c.lower().partition(":")[2], []).append(c)
        query = rest
    else:
        for c in candidates:
            keys.setdefault(c.lower(), []).append(c)
            if ":" in c:
                keys.setdefault(c.lower().partition(":")[2], []).append(c)
        query = name.lower()
    found = difflib.get_close_matches(query, list(keys), n=n, cutoff=0.6)
    return list(dict.fromkeys(c for k in found for c in keys[k]))[:n]


def suggestion(name: str, candidates: list[str] | None = None) -> str:
    """`` did you mean 'X'?`` (or '' when nothing is close), then where the full list is."""
    close = closest(name, known_names() if candidates is None else candidates)
    hint = f" did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return hint + " `dpcheck targets` lists every name."


def target_libraries() -> set[str]:
    """The ``LIBRARY`` parts of the registered target names (lower case)."""
    return {n.partition(":")[0].lower() for n in names()}


def check_name(name: str) -> None:
    """Raise :class:`KeyError` for a ``LIBRARY:NAME`` whose library has targets but whose name is
    not one of them (a typo, not a ``package.module:Factory``)."""
    if ":" in name and not is_target(name) and name.partition(":")[0].lower() in target_libraries():
        raise KeyError(f"unknown target {name!r};{suggestion(name, names())}")


def neighbour_relation(info: TargetInfo) -> str:
    """The neighbouring relation the target's library claims (``TargetInfo.neighbours``), with what
    the library treats as public when it says: ``replace-one (public: row count)``."""
    public = ", ".join(info.public)
    return f"{info.neighbours} (public: {public})" if public else info.neighbours
