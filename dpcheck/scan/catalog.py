"""The selected rules, imported only when a file actually has to be analysed.

Importing the rules imports libcst (~0.2 s), which a warm re-scan — every file answered by the
cache from ``stat`` alone — never needs. The rule ids (to validate ``--select``/``--ignore``, to
key the cache and to know whether the cross-module phase runs) are memoised in the cache folder,
keyed by a hash of the rules' source files, so they are known without importing a rule.
"""
from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, overload

from dpcheck import __version__
from dpcheck.scan.cache import signing_key
from dpcheck.scan.diagnostics import DIAGNOSTICS
from dpcheck.scan.selection import check_codes, is_enabled

if TYPE_CHECKING:
    from dpcheck.rule import Rule


def rules_folder() -> Path | None:
    """The folder of the ``dpcheck.rules`` package, located without importing it."""
    try:
        spec = importlib.util.find_spec("dpcheck.rules")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def rule_source_files() -> list[str]:
    """Every module of the rules package (rules and their helpers)."""
    folder = rules_folder()
    return sorted(str(p) for p in folder.glob("*.py")) if folder is not None else []


def _fingerprint(files: Sequence[str]) -> str:
    digest = hashlib.sha256(f"{__version__}\0".encode())
    for name in files:
        digest.update(name.encode() + b"\0")
        try:
            digest.update(Path(name).read_bytes())
        except OSError:
            pass
    return digest.hexdigest()


class RuleCatalog(Sequence["type[Rule]"]):
    """The rules enabled by ``select``/``ignore``, as a sequence that imports them on first use.

    ``ids`` needs no import when ``memo_dir`` holds the ids memoised for the current rule sources.
    Raises ``ConfigError`` (from :mod:`dpcheck.scan.selection`) for codes no rule id starts with.
    """

    def __init__(self, select: Sequence[str] | None, ignore: Sequence[str], memo_dir: Path | None = None) -> None:
        self.select = select
        self.ignore = ignore
        self.files = rule_source_files()
        self._classes: list[type[Rule]] | None = None
        known = self._memoised(memo_dir)
        if known is None:
            known = [r.id for r in self._all()]
            self._memoise(memo_dir, known)
        codes = known + list(DIAGNOSTICS)
        if select is not None:
            check_codes(select, codes, "select")
        check_codes(ignore, codes, "ignore")
        self.ids = [i for i in known if is_enabled(i, select, ignore)]

    def _memo_path(self, memo_dir: Path) -> Path:
        return memo_dir / f"rules-{_fingerprint(self.files)[:24]}.json"

    def _memoised(self, memo_dir: Path | None) -> list[str] | None:
        if memo_dir is None or not self.files:
            return None
        try:
            data = json.loads(self._memo_path(memo_dir).read_bytes())
        except (OSError, ValueError):
            return None
        ids = data.get("ids") if isinstance(data, dict) else None
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return None
        key = signing_key()
        mac = data.get("mac")
        # a memo this user's dpcheck did not write (e.g. committed to the scanned tree) is ignored
        if key is None or not isinstance(mac, str) or not hmac.compare_digest(mac.encode(), _ids_mac(key, ids)):
            return None
        return ids

    def _memoise(self, memo_dir: Path | None, known: list[str]) -> None:
        key = signing_key()
        if memo_dir is None or not self.files or key is None:
            return
        try:
            memo_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".rules-", suffix=".tmp", dir=memo_dir)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"ids": known, "mac": _ids_mac(key, known).decode()}, handle)
            os.replace(tmp, self._memo_path(memo_dir))
        except OSError:
            pass

    @staticmethod
    def _all() -> tuple[type[Rule], ...]:
        from dpcheck.rules import all_rules

        return all_rules()

    @property
    def loaded(self) -> bool:
        return self._classes is not None

    def classes(self) -> list[type[Rule]]:
        if self._classes is None:
            wanted = set(self.ids)
            self._classes = [r for r in self._all() if r.id in wanted]
        return self._classes

    @overload
    def __getitem__(self, index: int) -> type[Rule]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[type[Rule]]: ...
    def __getitem__(self, index):  # noqa: ANN001, ANN204 - as Sequence declares it
        return self.classes()[index]

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[type[Rule]]:
        return iter(self.classes())


def _ids_mac(key: bytes, ids: list[str]) -> bytes:
    return hmac.new(key, "\0".join(ids).encode(), hashlib.sha256).hexdigest().encode()
