"""Per-file scan results cached by file content.

One index file per effective configuration (dpcheck version, selected rules and their code,
size limit — the *salt*). It maps

* ``sha256(content)`` → the file's findings (path-free rows) and, in ``summaries``, its
  project-flow summary (``dpcheck/analysis/project.py``), and
* absolute path → ``(mtime_ns, size, inode, sha)``, so an unchanged file is recognised from
  ``stat`` alone without reading it. A stat entry is trusted only if the file was older than
  ``RACY_SECONDS`` when it was recorded (a write within the same clock tick keeps mtime and
  size; those files are re-read and looked up by content hash instead);

and, in ``flows``, the cross-module findings joined from a set of summaries (keyed by
:func:`flow_key` of the files they came from; the newest ``MAX_FLOWS`` are kept), so a re-scan
of an unchanged tree repeats no analysis at all.

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
from collections.abc import Iterable
from dataclasses import astuple, replace
from pathlib import Path
from typing import Any

from dpcheck.finding import Finding, RelatedLocation

FORMAT = 2
RACY_SECONDS = 2.0
MAX_FLOWS = 8


def flow_key(files: Iterable[tuple[str, str, str]]) -> str:
    """Key of a cross-module result: the (absolute path, display path, content hash) of every
    file whose summary took part."""
    digest = hashlib.sha256()
    for entry in sorted(files):
        digest.update("\0".join(entry).encode() + b"\n")
    return digest.hexdigest()


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def to_rows(findings: list[Finding]) -> list[list[Any]]:
    """Path-free rows: a related location in the finding's own file is stored with path ``""``."""
    rows = []
    for f in findings:
        if f.related:
            f = replace(f, related=tuple(replace(r, path="") if r.path == f.path else r for r in f.related))
        rows.append(list(astuple(f))[1:])
    return rows


def from_rows(rows: list[list[Any]], path: str) -> list[Finding]:
    out = []
    for row in rows:
        finding = Finding(path, *row)
        if finding.related:
            own = tuple(RelatedLocation(r.path or path, r.line, r.col, r.message) for r in finding.related)
            finding = replace(finding, related=own)
        out.append(finding)
    return out


def stat_key(st: os.stat_result) -> list[int]:
    return [st.st_mtime_ns, st.st_size, st.st_ino]


class ResultCache:
    def __init__(self, directory: Path, salt: str) -> None:
        self.directory = directory
        self.salt = salt
        self.path = directory / f"index-v{FORMAT}-{salt[:24]}.json"
        self.files: dict[str, list[Any]] = {}
        self.results: dict[str, list[list[Any]]] = {}
        self.summaries: dict[str, Any] = {}
        self.flows: dict[str, list[list[Any]]] = {}
        self._dirty = False
        self._load_into(self.files, self.results, self.summaries, self.flows)

    def _load_into(
        self,
        files: dict[str, list[Any]],
        results: dict[str, list[list[Any]]],
        summaries: dict[str, Any],
        flows: dict[str, list[list[Any]]],
    ) -> None:
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or data.get("salt") != self.salt or data.get("format") != FORMAT:
            return
        if isinstance(data.get("files"), dict) and isinstance(data.get("results"), dict):
            files.update(data["files"])
            results.update(data["results"])
            if isinstance(data.get("summaries"), dict):
                summaries.update(data["summaries"])
            if isinstance(data.get("flows"), dict):
                flows.update(data["flows"])

    def by_stat(self, abspath: str, st: os.stat_result) -> tuple[list[list[Any]], int, str] | None:
        """(rows, line count, content hash) of an unchanged file, recognised without reading it."""
        entry = self.files.get(abspath)
        if entry is None or len(entry) != 6 or not entry[4] or entry[:3] != stat_key(st):
            return None
        rows = self.results.get(entry[3])
        return None if rows is None else (rows, entry[5], entry[3])

    def summary(self, sha: str) -> Any:
        """The project-flow summary stored with this content, ``None`` if none was."""
        return self.summaries.get(sha)

    def store_summary(self, sha: str, summary: Any) -> None:
        if summary is not None:
            self.summaries[sha] = summary
            self._dirty = True

    def flow(self, key: str) -> list[list[Any]] | None:
        """Cross-module finding rows (``[path, *row]``) joined from the files behind ``key``."""
        rows = self.flows.get(key)
        return rows if isinstance(rows, list) else None

    def store_flow(self, key: str, rows: list[list[Any]]) -> None:
        self.flows.pop(key, None)
        self.flows[key] = rows
        self._dirty = True

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
        summaries: dict[str, Any] = {}
        flows: dict[str, list[list[Any]]] = {}
        self._load_into(files, results, summaries, flows)
        files.update(self.files)
        results.update(self.results)
        summaries.update(self.summaries)
        for key, rows in self.flows.items():  # ours are the newest
            flows.pop(key, None)
            flows[key] = rows
        flows = dict(list(flows.items())[-MAX_FLOWS:])
        live = {entry[3] for entry in files.values()}
        results = {sha: rows for sha, rows in results.items() if sha in live}
        summaries = {sha: s for sha, s in summaries.items() if sha in live}
        payload = json.dumps(
            {"format": FORMAT, "salt": self.salt, "files": files, "results": results, "summaries": summaries,
             "flows": flows},
            separators=(",", ":"),
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
