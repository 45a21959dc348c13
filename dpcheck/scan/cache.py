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

Every index is signed (HMAC-SHA256) with a key kept outside any scanned tree, in the user's
cache folder (:func:`signing_key`): an index this user's dpcheck did not write — e.g. one committed
to the repository under the default ``.dpcheck/cache`` — fails the check and is ignored, so a
planted ``{"results": {sha256(file): []}}`` cannot hide findings. A stat entry also records the
inode-change time, which ``touch -r`` cannot restore, so a same-size edit with its mtime put back
is re-read.

Writes go to a temporary file in the same folder and are moved in with ``os.replace``; before
writing, the index on disk is merged in, so two concurrent scans never corrupt the cache and at
worst one loses the other's newest entries.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import os
import tempfile
import time
from collections.abc import Iterable
from dataclasses import astuple, replace
from pathlib import Path
from typing import Any

from dpcheck.finding import Finding, RelatedLocation

FORMAT = 3
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
    return [st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns]


_MAC_FIELD = b',"mac":"'


def key_folder() -> Path:
    """The user's dpcheck folder for the signing key (never inside a scanned tree by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "dpcheck"


def signing_key() -> bytes | None:
    """This user's secret cache key, created on first use (mode 0600); ``None`` if it cannot be
    read or made — then no cache is trusted or written."""
    path = key_folder() / "cache-key"
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except OSError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        return data if len(data) >= 32 else None
    except OSError:
        return None
    key = secrets.token_bytes(32)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
    return key


def _sign(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode()


def _verified(key: bytes | None, raw: bytes) -> bool:
    """``raw`` ends with the ``"mac"`` field signing everything before it, with ``key``."""
    at = raw.rfind(_MAC_FIELD)
    if key is None or at < 0:
        return False
    mac = raw[at + len(_MAC_FIELD):].rstrip(b'"}\n')
    return hmac.compare_digest(mac, _sign(key, raw[:at]))


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
        self.key = signing_key()
        self._load_into(self.files, self.results, self.summaries, self.flows)

    def _load_into(
        self,
        files: dict[str, list[Any]],
        results: dict[str, list[list[Any]]],
        summaries: dict[str, Any],
        flows: dict[str, list[list[Any]]],
    ) -> None:
        try:
            raw = self.path.read_bytes()
            if not _verified(self.key, raw):
                return  # not written by this user's dpcheck: never trusted
            data = json.loads(raw)
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
        if entry is None or len(entry) != 7 or not entry[5] or entry[:4] != stat_key(st):
            return None
        rows = self.results.get(entry[4])
        return None if rows is None else (rows, entry[6], entry[4])

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
        if not self._dirty or self.key is None:
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
        live = {entry[4] for entry in files.values() if isinstance(entry, list) and len(entry) == 7}
        results = {sha: rows for sha, rows in results.items() if sha in live}
        summaries = {sha: s for sha, s in summaries.items() if sha in live}
        body = json.dumps(
            {"format": FORMAT, "salt": self.salt, "files": files, "results": results, "summaries": summaries,
             "flows": flows},
            separators=(",", ":"),
        ).encode()[:-1]
        payload = body + _MAC_FIELD + _sign(self.key, body) + b'"}\n' 
        fd, tmp = tempfile.mkstemp(prefix=".index-", suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as handle:
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
