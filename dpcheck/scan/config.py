"""Scan configuration: ``[tool.dpcheck]`` of the nearest ``pyproject.toml``, overridden by CLI flags.

Keys (kebab-case or snake_case): ``select``, ``ignore``, ``exclude``, ``per-file-ignores``,
``category``, ``max-file-size``, ``cache-dir``, ``jobs``, ``strict``.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dpcheck.scan.tolerant import DEFAULT_MAX_DEPTH

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024

#: folder names never descended into (explicitly named files are still scanned)
DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git", ".hg", ".svn", ".bzr", "_darcs",
    ".venv", "venv", ".env", ".tox", ".nox", "__pypackages__",
    "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".dpcheck", ".eggs", "*.egg-info",
    "build", "dist", "node_modules", "_build", "buck-out",
)

KNOWN_KEYS = {
    "select", "ignore", "exclude", "per-file-ignores", "category", "max-file-size", "cache-dir", "jobs", "strict",
    "max-depth", "file-timeout", "max-memory",
}
#: per-file limits (docs/scan.md, "Limits"): nesting handed to libcst, seconds, worker address space
DEFAULT_FILE_TIMEOUT = 120.0
DEFAULT_MAX_MEMORY = 4 * 1024**3


class ConfigError(ValueError):
    """Invalid configuration (pyproject or flags)."""


@dataclass(frozen=True)
class ScanConfig:
    root: Path = field(default_factory=Path.cwd)
    pyproject: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    categories: tuple[str, ...] | None = None
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    cache_dir: Path | None = None
    jobs: int | None = None
    #: acknowledged findings (category ``acknowledged``) gate like any other
    strict: bool = False
    max_depth: int = DEFAULT_MAX_DEPTH
    file_timeout: float = DEFAULT_FILE_TIMEOUT
    max_memory: int = DEFAULT_MAX_MEMORY

    def with_overrides(self, **overrides: Any) -> "ScanConfig":
        """CLI flags replace the file's values; ``None`` means "flag not given"."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def default_cache_dir(self) -> Path | None:
        """The cache folder; ``None`` (no cache) when the default ``.dpcheck/cache`` resolves
        outside the project — a committed symlink must not make dpcheck write elsewhere."""
        env = os.environ.get("DPCHECK_CACHE_DIR")
        if self.cache_dir is not None:
            return self.cache_dir
        if env:
            return Path(env)
        folder = self.root / ".dpcheck" / "cache"
        root = self.root.resolve()
        resolved = folder.resolve()
        return folder if resolved == root or root in resolved.parents else None


def find_pyproject(start: Path) -> Path | None:
    here = start.resolve()
    try:
        if here.is_file() or not here.exists():
            here = here.parent
    except OSError:  # e.g. inside a folder we may not look into: start from its parent
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(value: str | int) -> int:
    """``2097152``, ``"2MB"``, ``"512k"``, ``"1.5MiB"`` → bytes (binary multiples)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value <= 0:
            raise ConfigError(f"size must be positive, got {value}")
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise ConfigError(f"invalid size {value!r}; use bytes or a unit like 2MB, 512k")
    number, unit = match.groups()
    size = int(float(number) * _UNITS[(unit or "")[:1].lower()])
    if size <= 0:
        raise ConfigError(f"size must be positive, got {value!r}")
    return size


def positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit() or int(value) < 1:
        raise ConfigError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def positive_seconds(value: Any, what: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if isinstance(value, bool) or not seconds > 0 or seconds == float("inf"):
        raise ConfigError(f"{what} must be a positive number of seconds, got {value!r}")
    return seconds


def split_codes(values: Sequence[str] | None) -> tuple[str, ...] | None:
    """``["DP1,DP201", "DP3"]`` → ``("DP1", "DP201", "DP3")``; ``None`` stays ``None``."""
    if values is None:
        return None
    return tuple(c.strip().upper() for v in values for c in str(v).split(",") if c.strip())


def _str_list(table: dict[str, Any], key: str, origin: Path) -> tuple[str, ...]:
    value = table[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{origin}: [tool.dpcheck] {key} must be a list of strings")
    return tuple(value)


def load_config(start: Path | None = None, pyproject: Path | None = None) -> ScanConfig:
    """Read the configuration for a scan that starts at ``start`` (default: cwd)."""
    path = pyproject or find_pyproject(start or Path.cwd())
    if path is None:
        return ScanConfig(root=Path.cwd().resolve())
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    table = {k.replace("_", "-"): v for k, v in data.get("tool", {}).get("dpcheck", {}).items()}
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.dpcheck] keys: {', '.join(unknown)}")
    root = path.parent.resolve()
    config = ScanConfig(root=root, pyproject=path.resolve())
    values: dict[str, Any] = {}
    if "select" in table:
        values["select"] = split_codes(_str_list(table, "select", path))
    if "ignore" in table:
        values["ignore"] = split_codes(_str_list(table, "ignore", path))
    if "exclude" in table:
        values["exclude"] = _str_list(table, "exclude", path)
    if "category" in table:
        values["categories"] = tuple(c.strip() for c in _str_list(table, "category", path))
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{path}: [tool.dpcheck] per-file-ignores must be a table of glob = [ids]")
        values["per_file_ignores"] = tuple(
            (glob, split_codes(_str_list(pfi, glob, path)) or ()) for glob in pfi
        )
    if "max-file-size" in table:
        values["max_file_size"] = parse_size(table["max-file-size"])
    if "cache-dir" in table:
        cache_dir = (root / str(table["cache-dir"])).resolve()
        # a project's file must not make dpcheck write elsewhere (--cache-dir can)
        if cache_dir != root and root not in cache_dir.parents:
            raise ConfigError(f"{path}: [tool.dpcheck] cache-dir {table['cache-dir']!r} is outside the project "
                              f"{root}; give --cache-dir on the command line to use that folder")
        values["cache_dir"] = cache_dir
    if "jobs" in table:
        if not isinstance(table["jobs"], int) or table["jobs"] < 1:
            raise ConfigError(f"{path}: [tool.dpcheck] jobs must be a positive integer")
        values["jobs"] = table["jobs"]
    if "max-depth" in table:
        values["max_depth"] = positive_int(table["max-depth"], f"{path}: [tool.dpcheck] max-depth")
    if "file-timeout" in table:
        values["file_timeout"] = positive_seconds(table["file-timeout"], f"{path}: [tool.dpcheck] file-timeout")
    if "max-memory" in table:
        values["max_memory"] = parse_size(table["max-memory"])
    if "strict" in table:
        if not isinstance(table["strict"], bool):
            raise ConfigError(f"{path}: [tool.dpcheck] strict must be true or false")
        values["strict"] = table["strict"]
    return replace(config, **values)
