"""``dpcheck scan --package NAME``: the source files of an installed package, never imported.

``NAME`` is a distribution name (``smartnoise-synth``: its files are read from the RECORD of its
``.dist-info``) or a top-level import name (``snsynth``: located with
``importlib.util.find_spec``, which for a top-level name only searches ``sys.path`` and runs
nothing). Dotted names are refused: finding ``a.b`` would import ``a``. Findings show paths
relative to the folder the package is installed in (``snsynth/pytorch/nn/dpgan.py``).

An editable install is followed to its source: setuptools' import hook (the
``__editable___*_finder.py`` its RECORD lists, whose ``MAPPING`` is read with ``ast``, never
imported) and ``.pth`` path lines. A name not installed for this interpreter is looked up in
dpcheck's target envs too (``dpcheck env path NAME``: the smartnoise, synthcity and dpmm envs),
in their ``site-packages`` only.
"""
from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Sequence
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
    if not found and name.isidentifier():
        found = _from_finders(name, sys.path)
    for site in ([] if found else target_env_sites()):
        found = _from_distribution(name, [str(site)])
        if not found and name.isidentifier():
            found = _from_spec(name, [str(site)]) or _from_finders(name, [str(site)])
        if found:
            break
    if not found:
        hint = " (give a top-level name: finding a submodule would import its parents)" if "." in name else ""
        raise PackageNotFound(
            f"package {name!r} is not installed: no distribution and no top-level module of that name "
            f"with Python source on this interpreter's sys.path{hint}"
        )
    return sorted(found, key=lambda c: c.display)


def target_env_sites() -> list[Path]:
    """The ``site-packages`` folders of dpcheck's target envs that exist."""
    try:
        from dpcheck.targets.envs import env_path, known_envs
    except ImportError:
        return []
    sites: list[Path] = []
    for env in known_envs():
        sites.extend(sorted(env_path(env).glob("lib/python*/site-packages")))
    return [s for s in sites if s.is_dir()]


def _from_distribution(name: str, path: Sequence[str] | None = None) -> list[Candidate]:
    try:
        found = list(importlib.metadata.distributions(name=name, path=list(path))) if path is not None else [
            importlib.metadata.distribution(name)]
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return []
    if not found:
        return []
    dist = found[0]
    base = Path(str(dist.locate_file(""))).resolve()
    out: list[Candidate] = []
    hooks: list[Path] = []
    for entry in dist.files or ():
        located = Path(str(dist.locate_file(entry))).resolve()
        if entry.name.startswith("__editable__") and entry.name.endswith((".py", ".pth")):
            hooks.append(located)
            continue
        if not str(entry).endswith(PY_SUFFIXES) or "__pycache__" in entry.parts:
            continue
        if located.is_file() and base in located.parents:
            out.append(Candidate(str(located), located.relative_to(base).as_posix()))
    names = [n for n in (dist.read_text("top_level.txt") or "").split() if n.isidentifier()]
    for hook in hooks:
        out.extend(_from_editable(hook, names))
    if out:
        return out
    # an editable install without a hook file in its RECORD: the top-level names lead to it
    return [c for top in names for c in _from_spec(top, path)]


def _from_editable(hook: Path, names: list[str]) -> list[Candidate]:
    """The sources an editable install's hook points at: the finder's ``MAPPING`` (top-level
    name → folder or file), or the folders a ``.pth`` file adds to ``sys.path``."""
    try:
        text = hook.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    out: list[Candidate] = []
    if hook.suffix == ".py":
        for top, location in _finder_mapping(text).items():
            out.extend(_located(top, Path(location)))
        return out
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "import ", "import\t")):
            continue
        folder = Path(line) if os.path.isabs(line) else hook.parent / line
        for top in names:
            out.extend(_from_spec(top, [str(folder)]))
    return out


def _from_finders(name: str, folders: Sequence[str]) -> list[Candidate]:
    """Top-level ``name`` mapped by a setuptools editable finder in one of ``folders`` (the
    import hook is not active when its ``.pth`` was not processed, e.g. in a target env)."""
    for folder in folders:
        try:
            finders = sorted(Path(folder).glob("__editable___*_finder.py"))
        except OSError:
            continue
        for finder in finders:
            try:
                location = _finder_mapping(finder.read_text(encoding="utf-8")).get(name)
            except (OSError, UnicodeDecodeError):
                continue
            if location:
                return _located(name, Path(location))
    return []


def _finder_mapping(text: str) -> dict[str, str]:
    """``MAPPING = {...}`` of a setuptools editable finder, read as a literal (never run)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "MAPPING" for t in targets) and node.value is not None:
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError, RecursionError):
                return {}
            if isinstance(value, dict):
                return {str(k): str(v) for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
    return {}


def _located(top: str, location: Path) -> list[Candidate]:
    """The files of top-level ``top`` found at ``location`` (its package folder or module file)."""
    if location.is_dir():
        return _folder(location.resolve(), location.resolve().parent)
    if location.suffix in PY_SUFFIXES and location.is_file():
        path = location.resolve()
        return [Candidate(str(path), path.name)]
    return []


def _folder(folder: Path, base: Path) -> list[Candidate]:
    out: list[Candidate] = []
    for candidate in discover([str(folder)], root=folder, default_excludes=DEFAULT_EXCLUDES):
        rel = Path(os.path.relpath(os.path.abspath(candidate.path), base)).as_posix()
        out.append(Candidate(candidate.path, rel, candidate.problem))
    return out


def _from_spec(name: str, path: Sequence[str] | None = None) -> list[Candidate]:
    try:
        if path is None:
            spec = importlib.util.find_spec(name)
        else:
            spec = importlib.machinery.PathFinder.find_spec(name, list(path))
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        out: list[Candidate] = []
        for location in spec.submodule_search_locations:
            folder = Path(location).resolve()
            if folder.is_dir():
                out.extend(_folder(folder, folder.parent))
        return out
    origin = spec.origin or ""
    if origin.endswith(PY_SUFFIXES) and os.path.isfile(origin):
        path = Path(origin).resolve()
        return [Candidate(str(path), path.name)]
    return []
