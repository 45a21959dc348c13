"""SQLite store of finished shadow runs (resumable audits, reuse across attacks).

One writer: the parent process writes each run as soon as its result comes back. Files that
are not SQLite, SQLite files of another application, other schema versions and rows whose
checksum does not match are refused with :class:`StoreError`, never silently reused.
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np

APPLICATION = "dpcheck-audit"
SCHEMA_VERSION = 1
DEFAULT_PATH = Path(".dpcheck") / "audit.sqlite"
T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS specs (hash TEXT PRIMARY KEY, generation TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    spec_hash TEXT NOT NULL REFERENCES specs(hash),
    world INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    rows_requested INTEGER NOT NULL,
    rows_returned INTEGER NOT NULL,
    data BLOB NOT NULL,
    checksum TEXT NOT NULL,
    seconds REAL NOT NULL,
    worker TEXT NOT NULL,
    session TEXT NOT NULL,
    finished REAL NOT NULL,
    PRIMARY KEY (spec_hash, world, idx)
);
CREATE TABLE IF NOT EXISTS targets (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL);
"""


class StoreError(Exception):
    """The store file cannot be used (corrupt, foreign, other schema version)."""


@dataclass(frozen=True)
class RunRecord:
    world: int
    index: int
    seed: int
    rows_requested: int
    synth: np.ndarray
    seconds: float
    worker: str
    session: str
    finished: float


def encode_array(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array, dtype=np.float64), allow_pickle=False)
    return buffer.getvalue()


def decode_array(blob: bytes) -> np.ndarray:
    return np.load(io.BytesIO(blob), allow_pickle=False)


#: seconds SQLite waits for another process's lock (and dpcheck retries what SQLite does not wait for)
BUSY_SECONDS = 30.0


def _error_name(exc: sqlite3.Error) -> str:
    """SQLite's error name (Python ≥ 3.11), else one guessed from the message."""
    name = getattr(exc, "sqlite_errorname", None)
    if name:
        return name
    text = str(exc).lower()
    for needle, guess in (("disk is full", "SQLITE_FULL"), ("readonly", "SQLITE_READONLY"),
                          ("unable to open", "SQLITE_CANTOPEN"), ("locked", "SQLITE_BUSY"),
                          ("disk i/o", "SQLITE_IOERR"), ("not a database", "SQLITE_NOTADB"),
                          ("malformed", "SQLITE_CORRUPT")):
        if needle in text:
            return guess
    return "SQLITE_ERROR"


def _busy(exc: sqlite3.Error) -> bool:
    return _error_name(exc).startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def describe_error(path: Path, exc: sqlite3.Error, *, opening: bool) -> str:
    """What went wrong, in words that point at the cause: the disk, permissions, or the file itself."""
    name = _error_name(exc)
    if name.startswith("SQLITE_FULL"):
        return (f"{path}: the disk is full ({exc}); free space and run the same command again: stored runs are "
                "kept and reused")
    if name.startswith("SQLITE_READONLY"):
        return (f"{path}: the store is read-only ({exc}); dpcheck writes every finished run to it: make the file "
                "and its folder writable or pass another --store")
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return f"{path}: cannot open or create the store ({exc}); check the permissions of the file and its folder"
    if name.startswith("SQLITE_IOERR"):
        return f"{path}: input/output error on the store ({exc}); check the disk and the file system"
    if _busy(exc):
        return (f"{path}: the store stayed locked by another process for {BUSY_SECONDS:g} s ({exc}); "
                "try again when it has finished")
    if opening:
        return f"{path}: not a usable dpcheck audit store ({exc}); move it away or pass another --store"
    return f"{path}: store damaged ({exc})"


def _guarded(method: Callable[..., T]) -> Callable[..., T]:
    """SQLite errors after opening become StoreError with a message naming their cause."""

    @functools.wraps(method)
    def wrapper(self: "Store", *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise StoreError(describe_error(self.path, exc, opening=False)) from exc

    return wrapper


def _retrying(action: Callable[[], T]) -> T:
    """``action`` again while another process holds a lock SQLite does not wait for (creating the
    store, switching it to WAL), for up to :data:`BUSY_SECONDS`."""
    deadline = time.monotonic() + BUSY_SECONDS
    pause = 0.01
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.5)


def _checksum(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_file():
            raise StoreError(f"{self.path}: not a regular file (a device or a folder); pass a file path as --store")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the folder {exc.filename or self.path.parent}: "
                             f"{exc.strerror or exc}") from None
        try:
            self.db = sqlite3.connect(str(self.path), timeout=BUSY_SECONDS, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(describe_error(self.path, exc, opening=True)) from None
        try:
            _retrying(self._open)
            _retrying(self._pragmas)
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise StoreError(describe_error(self.path, exc, opening=True)) from exc
        except BaseException:
            self.db.close()
            raise

    def _pragmas(self) -> None:
        # WAL + NORMAL: a killed process loses nothing committed; only power loss may drop the last runs
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")

    def _open(self) -> None:
        """Create the schema in an empty file, or verify an existing store, in one write transaction:
        another process creating the same store at the same moment waits, then finds it complete."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if tables:
                self._verify(tables)
            else:
                self._create()
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise

    def _create(self) -> None:
        for statement in filter(str.strip, _SCHEMA.split(";")):
            self.db.execute(statement)
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            [("application", APPLICATION), ("schema_version", str(SCHEMA_VERSION))])

    def _verify(self, tables: set[str]) -> None:
        check = self.db.execute("PRAGMA quick_check").fetchone()
        if not check or check[0] != "ok":
            raise StoreError(f"{self.path}: SQLite integrity check failed ({check[0] if check else '?'})")
        if "meta" not in tables:
            raise StoreError(f"{self.path}: SQLite file of another application (no dpcheck metadata); "
                             "refusing to use it")
        meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("application") != APPLICATION:
            raise StoreError(f"{self.path}: belongs to {meta.get('application')!r}, not {APPLICATION!r}")
        if meta.get("schema_version") != str(SCHEMA_VERSION):
            raise StoreError(f"{self.path}: store schema version {meta.get('schema_version')!r}, "
                             f"this dpcheck reads version {SCHEMA_VERSION}")
        missing = {"specs", "runs", "targets"} - tables
        if missing:
            raise StoreError(f"{self.path}: damaged store, missing tables {', '.join(sorted(missing))}")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # specs
    @_guarded
    def register(self, spec_hash: str, generation: dict[str, Any]) -> None:
        text = json.dumps(generation, sort_keys=True)
        # INSERT OR IGNORE: another audit on this store may register the same spec at the same moment
        self.db.execute("INSERT OR IGNORE INTO specs VALUES (?, ?, ?)", (spec_hash, text, time.time()))
        row = self.db.execute("SELECT generation FROM specs WHERE hash=?", (spec_hash,)).fetchone()
        if json.loads(row[0]) != json.loads(text):
            raise StoreError(f"{self.path}: spec hash collision or tampered spec for {spec_hash}")

    # runs
    @_guarded
    def put(self, spec_hash: str, world: int, index: int, *, seed: int, rows_requested: int,
            synth: np.ndarray, seconds: float, worker: str, session: str) -> bool:
        """Insert one finished run; False (and nothing written) when it was already stored."""
        blob = encode_array(synth)
        cur = self.db.execute(
            "INSERT OR IGNORE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (spec_hash, world, index, seed, rows_requested, int(np.shape(synth)[0]), blob,
             _checksum(blob), float(seconds), worker, session, time.time()))
        return cur.rowcount == 1

    @_guarded
    def done(self, spec_hash: str, runs: int | None = None) -> set[tuple[int, int]]:
        sql, args = "SELECT world, idx FROM runs WHERE spec_hash=?", [spec_hash]
        if runs is not None:
            sql += " AND idx < ?"
            args.append(runs)
        return {(w, i) for w, i in self.db.execute(sql, args)}

    @_guarded
    def load(self, spec_hash: str, runs: int) -> list[RunRecord]:
        out = []
        for (world, idx, seed, requested, blob, checksum, seconds, worker, session, finished) in self.db.execute(
                "SELECT world, idx, seed, rows_requested, data, checksum, seconds, worker, session, finished "
                "FROM runs WHERE spec_hash=? AND idx < ? ORDER BY world, idx", (spec_hash, runs)):
            if _checksum(blob) != checksum:
                raise StoreError(f"{self.path}: run (world {world}, index {idx}) of spec {spec_hash} "
                                 "is corrupt (checksum mismatch)")
            try:
                synth = decode_array(blob)
            except ValueError as exc:
                raise StoreError(f"{self.path}: run (world {world}, index {idx}) unreadable: {exc}") from exc
            out.append(RunRecord(world, idx, seed, requested, synth, seconds, worker, session, finished))
        return out

    # cached target choices
    @_guarded
    def get_target(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT value FROM targets WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    @_guarded
    def put_target(self, key: str, value: dict[str, Any]) -> None:
        self.db.execute("INSERT OR REPLACE INTO targets VALUES (?, ?, ?)",
                        (key, json.dumps(value, sort_keys=True), time.time()))
