"""Per-file scan results cached by file content.

One index file per effective configuration (dpcheck version, selected rules and their code,
size limit — the *salt*). It maps

* ``sha256(content)`` → the file's findings (path-free rows), and
* absolute path → ``(mtime_ns, size, inode, sha)``, so an unchanged file is recognised from
  ``stat`` alone without reading it. A stat entry is trusted only if the file was older than
  ``RACY_SECONDS`` when it was recorded (a write within the same clock tick keeps mtime and
  size; those files are re-read and looked up by content hash instead).

Writes go to a temporary file in the same folder and are moved in with ``os.replace``; before
writing, the index on disk is merged in, so two concurrent scans never corrupt the cache and at
worst one loses the other's newest entries.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import astuple
from pathlib import Path
from typing import Any

from dpcheck.finding import Finding

FORMAT = 1
RACY_SECONDS = 2.0


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def to_rows(findings: list[Finding]) -> list[list[Any]]:
    return [list(astuple(f))[1:] for f in findings]


def from_rows(rows: list[list[Any]], path: str) -> list[Finding]:
    return [Finding(path, *row) for row in rows]


def stat_key(st: os.stat_result) -> list[int]:
    return [st.st_mtime_ns, st.st_size, st.st_ino]


class ResultCache:
    def __init__(self, directory: Path, salt: str) -> None:
        self.directory = directory
        self.salt = salt
        self.path = directory / f"index-v{FORMAT}-{salt[:24]}.json"
        self.files: dict[str, list[Any]] = {}
        self.results: dict[str, list[list[Any]]] = {}
        self._dirty = False
        self._load_into(self.files, self.results)

    def _load_into(self, files: dict[str, list[Any]], results: dict[str, list[list[Any]]]) -> None:
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("salt") != self.salt or data.get("format") != FORMAT:
            return
        if isinstance(data.get("files"), dict) and isinstance(data.get("results"), dict):
            files.update(data["files"])
            results.update(data["results"])

    def by_stat(self, abspath: str, st: os.stat_result) -> tuple[list[list[Any]], int] | None:
        """(rows, line count) of an unchanged file, recognised without reading it."""
        entry = self.files.get(abspath)
        if entry is None or len(entry) != 6 or not entry[4] or entry[:3] != stat_key(st):
            return None
        rows = self.results.get(entry[3])
        return None if rows is None else (rows, entry[5])

    def by_content(self, sha: str) -> list[list[Any]] | None:
        return self.results.get(sha)

    def store(self, abspath: str, st: os.stat_result, sha: str, lines: int, rows: list[list[Any]] | None) -> None:
        trusted = st.st_mtime_ns < (time.time() - RACY_SECONDS) * 1e9
        self.files[abspath] = [*stat_key(st), sha, trusted, lines]
        if rows is not None:
            self.results[sha] = rows
        self._dirty = True

    def save(self) -> None:
        if not self._dirty:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        files: dict[str, list[Any]] = {}
        results: dict[str, list[list[Any]]] = {}
        self._load_into(files, results)
        files.update(self.files)
        results.update(self.results)
        live = {entry[3] for entry in files.values()}
        results = {sha: rows for sha, rows in results.items() if sha in live}
        payload = json.dumps(
            {"format": FORMAT, "salt": self.salt, "files": files, "results": results}, separators=(",", ":")
        )
        fd, tmp = tempfile.mkstemp(prefix=".index-", suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        self._dirty = False
        gitignore = self.directory / ".gitignore"
        if not gitignore.exists():
            try:
                gitignore.write_text("*\n")
            except OSError:
                pass


def make_salt(version: str, rule_ids: list[str], code_files: list[str], extra: str) -> str:
    """Everything that changes per-file results: tool version, rule set, rule code, size limit."""
    digest = hashlib.sha256()
    digest.update(f"{FORMAT}\0{version}\0{','.join(sorted(rule_ids))}\0{extra}\0".encode())
    for name in sorted(set(code_files)):
        try:
            digest.update(Path(name).read_bytes())
        except OSError:
            digest.update(name.encode())
    return digest.hexdigest()
