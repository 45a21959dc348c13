"""Every name ``--impl`` accepts, with where it runs: the data behind ``dpcheck targets``.

Nothing here imports a target's library or starts an env: versions are read from the installed
distributions' metadata on disk (the main environment, or a target env's ``site-packages``), and
for an env that does not exist from its pinned requirements file.
"""
from __future__ import annotations

import importlib.metadata
import re
from dataclasses import asdict, dataclass
from typing import Any

from dpcheck.targets.base import TargetInfo

#: the audit's own neighbouring relation for the built-in implementations and reference mechanisms
AUDIT_RELATION = "add/remove one record"


@dataclass(frozen=True)
class Entry:
    name: str
    group: str  # built-in | reference | library
    kind: str  # PATE-GAN | mechanism | synthesizer
    library: str
    version: str | None
    env: str
    env_exists: bool
    neighbours: str
    description: str
    #: what to run when the env or the library is missing ("" when it is ready)
    setup: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_version(env: str, library: str) -> str | None:
    """``library==X`` from the env's requirements file."""
    from dpcheck.targets import envs

    try:
        text = envs.requirements_file(env).read_text(encoding="utf-8")
    except (OSError, envs.EnvError):
        return None
    for line in text.splitlines():
        package, sep, version = line.split("#", 1)[0].strip().partition("==")
        if sep and _normal(package.split("[", 1)[0]) == _normal(library):
            return version.strip() or None
    return None


def env_ready(env: str) -> bool:
    if env == "main":
        return True
    from dpcheck.targets import envs

    return envs.is_ready(env)


def installed_version(library: str, env: str) -> str | None:
    """The version installed in ``env`` (main: this interpreter's; else the env's site-packages)."""
    if env == "main":
        paths = None
    else:
        from dpcheck.targets import envs

        root = envs.env_path(env)
        paths = [str(p) for p in sorted(root.glob("lib/python*/site-packages"))] if root.is_dir() else []
        if not paths:
            return None
    dists = list(importlib.metadata.distributions(name=library, path=paths)) if paths is not None else \
        list(importlib.metadata.distributions(name=library))
    return dists[0].version if dists else None


def _target_entry(info: TargetInfo) -> Entry:
    from dpcheck.targets.registry import INSTALL_HINT, neighbour_relation

    ready = env_ready(info.env)
    version = installed_version(info.library, info.env) if ready else None
    if info.library == "dpcheck":
        from dpcheck import __version__

        version = __version__
    setup = ""
    if version is None:
        pinned = pinned_version(info.env, info.library) if info.env != "main" else None
        version = f"{pinned} (pinned)" if pinned else None
        setup = INSTALL_HINT.get(info.env, f"dpcheck env create {info.env}")
    first_line = (info.doc or info.note).strip().splitlines()[0] if (info.doc or info.note).strip() else ""
    return Entry(info.name, "reference" if info.library == "dpcheck" else "library", info.kind, info.library,
                 version, info.env, ready, neighbour_relation(info), first_line, setup)


def entries() -> list[Entry]:
    """Built-in implementations, reference mechanisms, then every real-library target."""
    from dpcheck import __version__, impls
    from dpcheck.targets import registry

    out = []
    for name in impls.NAMES:
        what = "corrected twin" if name.endswith("-fixed") else "vendored upstream code"
        out.append(Entry(name, "built-in", "PATE-GAN", "dpcheck", __version__, "main", True, AUDIT_RELATION,
                         f"{what} ({name.removesuffix('-fixed')})"))
    try:
        from dpcheck.audit.reference.mechanisms import REFERENCE
    except ImportError:
        REFERENCE = {}  # noqa: N806 - the audit extra is not installed
    for name, cls in REFERENCE.items():
        out.append(Entry(name, "reference", "mechanism", "dpcheck", __version__, "main", True, AUDIT_RELATION,
                         str(getattr(cls, "upstream", "")).removeprefix("dpcheck built-in reference ").strip("()")))
    out.extend(_target_entry(info) for info in registry.all_targets())
    return out

