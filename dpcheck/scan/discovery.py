"""Find the Python files to scan without following symlink loops.

Directories are walked with ``os.scandir``; symlinked folders are followed, and every folder is
entered once, by its real identity (device, inode): a ladder of symlinks to the same folders
costs one visit per folder, not one per path. A folder already on the current path is a loop
(DP004); a folder that cannot be listed is reported (DP009), never skipped silently. Default excludes apply
to folders met while walking; ``exclude`` globs apply to everything met while walking.
A file named on the command line is always scanned.
"""
from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from dpcheck.scan.globs import matches, matches_any

PY_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class Candidate:
    """A path to analyse: ``path`` is what is opened, ``display`` what findings show."""

    path: str
    display: str
    #: set when discovery already knows the path cannot be analysed ("loop", "broken",
    #: "unlistable: <reason>" for a folder)
    problem: str | None = None


def display_path(path: str, cwd: str) -> str:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, cwd) if absolute.startswith(cwd + os.sep) or absolute == cwd else absolute
    return Path(rel).as_posix()


def relative_to_root(path: str, root: str) -> str:
    absolute = os.path.abspath(path)
    if absolute.startswith(root + os.sep):
        return Path(os.path.relpath(absolute, root)).as_posix()
    return Path(absolute).as_posix().lstrip("/")


def discover(
    paths: Sequence[str | os.PathLike[str]],
    *,
    root: Path,
    exclude: Sequence[str] = (),
    default_excludes: Sequence[str] = (),
) -> Iterator[Candidate]:
    cwd = os.getcwd()
    root_s = str(root)
    seen: set[str] = set()
    #: (device, inode) of every folder entered
    entered: set[tuple[int, int]] = set()

    def excluded(path: str, base: str) -> bool:
        """``exclude`` globs, relative to the project root (or to the scanned folder outside it)."""
        if not exclude:
            return False
        absolute = os.path.abspath(path)
        anchor = root_s if absolute.startswith(root_s + os.sep) else base
        return matches_any(Path(os.path.relpath(absolute, anchor)).as_posix(), exclude)

    def emit(path: str, problem: str | None = None) -> Iterator[Candidate]:
        key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            yield Candidate(path, display_path(path, cwd), problem)

    def walk(folder: str, base: str, ancestors: frozenset[tuple[int, int]]) -> Iterator[Candidate]:
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            yield from emit(folder, f"unlistable: {exc.strerror or exc}")
            return
        for entry in entries:
            path = entry.path
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                is_dir = False
            if is_dir:
                if any(matches(entry.name, p) for p in default_excludes) or excluded(path, base):
                    continue
                try:
                    st = os.stat(path)
                except OSError as exc:
                    yield from emit(path, f"unlistable: {exc.strerror or exc}")
                    continue
                ident = (st.st_dev, st.st_ino)
                if ident in ancestors:
                    yield from emit(path, "loop")
                    continue
                if ident in entered:
                    continue  # the same folder reached through another symlink: already scanned
                entered.add(ident)
                yield from walk(path, base, ancestors | {ident})
            elif entry.name.endswith(PY_SUFFIXES):
                if excluded(path, base):
                    continue
                problem = _link_problem(path) if entry.is_symlink() else None
                yield from emit(path, problem)

    for given in paths:
        path = os.fspath(given)
        if os.path.isdir(path):
            st = os.stat(path)
            ident = (st.st_dev, st.st_ino)
            if ident not in entered:
                entered.add(ident)
                yield from walk(path, os.path.abspath(path), frozenset({ident}))
        elif present(path):
            yield from emit(path, _link_problem(path) if os.path.islink(path) else None)
        else:
            raise FileNotFoundError(path)


def present(path: str) -> bool:
    """``path`` exists, or cannot be looked at (permission denied: the scan reports it, DP002)."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def _link_problem(path: str) -> str | None:
    try:
        os.stat(path)
    except OSError as exc:
        return "loop" if exc.errno == errno.ELOOP else "broken"
    return None


def is_regular(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode)
