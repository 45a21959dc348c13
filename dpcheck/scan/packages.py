"""``dpcheck scan --package NAME``: the source files of an installed package, never imported.

``NAME`` is a distribution name (``smartnoise-synth``: its files are read from the RECORD of its
``.dist-info``) or a top-level import name (``snsynth``: located with
``importlib.util.find_spec``, which for a top-level name only searches ``sys.path`` and runs
nothing). Dotted names are refused: finding ``a.b`` would import ``a``. Findings show paths
relative to the folder the package is installed in (``snsynth/pytorch/nn/dpgan.py``).
"""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
from pathlib import Path

from dpcheck.scan.config import DEFAULT_EXCLUDES
from dpcheck.scan.discovery import PY_SUFFIXES, Candidate, discover


class PackageNotFound(LookupError):
    """No installed distribution or top-level module of that name."""


def package_candidates(name: str) -> list[Candidate]:
    """The ``.py``/``.pyi`` files of the installed package ``name``, with display paths relative
    to its installation folder. Raises ``PackageNotFound``."""
    importlib.invalidate_caches()
    found = _from_distribution(name)
    if not found and name.isidentifier():
        found = _from_spec(name)
    if not found:
        hint = " (give a top-level name: finding a submodule would import its parents)" if "." in name else ""
        raise PackageNotFound(
            f"package {name!r} is not installed: no distribution and no top-level module of that name "
            f"with Python source on this interpreter's sys.path{hint}"
        )
    return sorted(found, key=lambda c: c.display)


def _from_distribution(name: str) -> list[Candidate]:
    try:
        dist = importlib.metadata.distribution(name)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return []
    base = Path(str(dist.locate_file(""))).resolve()
    out: list[Candidate] = []
    for entry in dist.files or ():
        if not str(entry).endswith(PY_SUFFIXES) or "__pycache__" in entry.parts:
            continue
        path = Path(str(dist.locate_file(entry))).resolve()
        if path.is_file() and base in path.parents:
            out.append(Candidate(str(path), path.relative_to(base).as_posix()))
    if out:
        return out
    # e.g. an editable install: the RECORD holds no source, the top-level names lead to it
    names = (dist.read_text("top_level.txt") or "").split()
    return [c for top in names if top.isidentifier() for c in _from_spec(top)]


def _from_spec(name: str) -> list[Candidate]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        out: list[Candidate] = []
        for location in spec.submodule_search_locations:
            folder = Path(location).resolve()
            if not folder.is_dir():
                continue
            for candidate in discover([str(folder)], root=folder, default_excludes=DEFAULT_EXCLUDES):
                rel = Path(os.path.relpath(os.path.abspath(candidate.path), folder.parent)).as_posix()
                out.append(Candidate(candidate.path, rel, candidate.problem))
        return out
    origin = spec.origin or ""
    if origin.endswith(PY_SUFFIXES) and os.path.isfile(origin):
        path = Path(origin).resolve()
        return [Candidate(str(path), path.name)]
    return []
