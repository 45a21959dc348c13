"""Matrix rows for real-library targets (``LIBRARY:NAME``): a static scan of the installed package.

The package's files are found from its distribution's RECORD, in the main environment or in a
target env's ``site-packages`` (located on disk: nothing in the package or the env is imported or
run). The PATE-GAN property checks drive probe events that a real library does not emit, so a
row's cells carry static evidence only; the audit column comes from a stored or fresh audit.
"""
from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpcheck.categories import ACKNOWLEDGED, DIAGNOSTIC
from dpcheck.finding import Finding
from dpcheck.matrix.applicability import row_scopes
from dpcheck.matrix.cells import make_cells, static_evidence
from dpcheck.matrix.model import Row
from dpcheck.scan.discovery import PY_SUFFIXES, Candidate
from dpcheck.targets.base import TargetError, TargetInfo

Progress = Callable[[str], None]

PROPERTY_NOTE = ("property checks: not applicable (they observe the probe events of the PATE-GAN adapters; "
                 "a real library emits none), so cells carry static evidence only")


@dataclass(frozen=True)
class LibrarySource:
    library: str
    version: str
    env: str
    #: the folder the distribution is installed in (its site-packages)
    location: Path
    candidates: tuple[Candidate, ...]


def site_packages(env: str) -> list[Path]:
    """The ``site-packages`` folders of a target env, found on disk (the env's python is not run)."""
    from dpcheck.targets import envs

    root = envs.env_path(env)
    if not root.is_dir():
        raise TargetError(f"the {env!r} environment does not exist at {root}: create it with `dpcheck env create {env}`")
    found = sorted(root.glob("lib/python*/site-packages")) + sorted(root.glob("Lib/site-packages"))
    if not found:
        raise TargetError(f"the {env!r} environment at {root} has no site-packages folder: "
                          f"recreate it with `dpcheck env create {env} --force`")
    return found


def locate(info: TargetInfo) -> LibrarySource:
    """The installed source files of ``info.library`` in the target's environment."""
    from dpcheck.targets.registry import INSTALL_HINT

    if info.env == "main":
        dists = list(importlib.metadata.distributions(name=info.library))
        if not dists:
            raise TargetError(f"{info.name} needs {info.library}, which is not installed: {INSTALL_HINT['main']}")
    else:
        dists = list(importlib.metadata.distributions(name=info.library, path=[str(p) for p in site_packages(info.env)]))
        if not dists:
            raise TargetError(f"{info.name} needs {info.library}, which the {info.env!r} env lacks: "
                              f"recreate it with `dpcheck env create {info.env} --force`")
    dist = dists[0]
    base = Path(str(dist.locate_file(""))).resolve()
    candidates = []
    for entry in dist.files or ():
        if not str(entry).endswith(PY_SUFFIXES) or "__pycache__" in entry.parts:
            continue
        path = Path(str(dist.locate_file(entry))).resolve()
        if path.is_file() and base in path.parents:
            candidates.append(Candidate(str(path), path.relative_to(base).as_posix()))
    if not candidates:
        raise TargetError(f"{info.library} {dist.version} ({info.env} env) lists no Python source files in its "
                          "RECORD; reinstall it")
    return LibrarySource(info.library, dist.version, info.env, base,
                         tuple(sorted(candidates, key=lambda c: c.display)))


_scans: dict[tuple[str, str], tuple[list[Finding], list[str], dict[str, str]]] = {}


def scan_library(source: LibrarySource, root: Path) -> tuple[list[Finding], list[str], dict[str, str]]:
    """Every rule over the library's files; the per-file scan cache (``.dpcheck/cache`` under
    ``root``) answers unchanged files, and one process scans a library once for all its targets."""
    from dpcheck.rules import all_rules
    from dpcheck.scan.config import ScanConfig
    from dpcheck.scan.engine import Engine

    key = (str(source.location), source.library)
    if key not in _scans:
        rules = list(all_rules())
        result = Engine(ScanConfig(root=root), rules, use_cache=True, jobs=1).scan([], source.candidates)
        if result.crashed:
            crashed = [f for f in result.findings if f.category == DIAGNOSTIC]
            raise RuntimeError(f"a rule crashed while scanning {source.library}: {crashed[:1]}")
        _scans[key] = (list(result.findings), [r.id for r in rules], {r.id: r.category for r in rules})
    return _scans[key]


def build_target_row(name: str, *, root: Path, audit: dict[str, Any] | None = None,
                     progress: Progress | None = None) -> Row:
    """Raises :class:`TargetError` when the library or its env is missing."""
    from dpcheck.targets import registry

    info = registry.get(name)
    source = locate(info)
    if progress:
        progress(f"{name}: static scan of {len(source.candidates)} file(s) of {source.library} {source.version} "
                 f"({source.env} env)")
    findings, rules_run, category_of = scan_library(source, root)
    acknowledged = [f for f in findings if f.category == ACKNOWLEDGED]
    diagnostics = [f for f in findings if f.category == DIAGNOSTIC]
    counted = [f for f in findings if f.category not in (ACKNOWLEDGED, DIAGNOSTIC)]
    cells = make_cells(static_evidence(counted, rules_run, category_of, row_scopes(info.kind, name)))
    target = {
        "library": source.library,
        "version": source.version,
        "env": source.env,
        "location": _shown(source.location),
        "files_scanned": len(source.candidates),
        "kind": info.kind,
        "dataset": info.dataset,
        "note": info.note,
        "property_checks": PROPERTY_NOTE,
        # documented, flagged fallbacks: shown, never a V cell
        "acknowledged": [_ref(f) for f in acknowledged],
        # files the scanner could not analyse (third-party code: reported, not an error of the matrix)
        "not_analysed": [_ref(f) for f in diagnostics],
    }
    return Row(name, cells, audit, [], counted, target)


def _ref(f: Finding) -> dict[str, Any]:
    return {"ref": f"{f.rule} {f.path}:{f.line}", "message": f.message}


def _shown(path: Path) -> str:
    """Paths under the working folder relative to it, under the home folder as ``~/…``: reports
    do not name the machine's folders."""
    for base, prefix in ((Path.cwd().resolve(), ""), (Path.home().resolve(), "~/")):
        try:
            return prefix + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)
