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


def _guarded(method: Callable[..., T]) -> Callable[..., T]:
    """SQLite errors after opening (a file damaged under us) become StoreError too."""

    @functools.wraps(method)
    def wrapper(self: "Store", *args: Any, **kwargs: Any) -> T:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: store damaged ({exc})") from exc

    return wrapper


def _checksum(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        try:
            self.db = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
            if fresh:
                self._create()
            else:
                self._verify()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable dpcheck audit store ({exc}); "
                             "move it away or pass another --store") from exc

    def _pragmas(self) -> None:
        # WAL + NORMAL: a killed process loses nothing committed; only power loss may drop the last runs
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")

    def _create(self) -> None:
        self._pragmas()
        self.db.executescript(_SCHEMA)
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            [("application", APPLICATION), ("schema_version", str(SCHEMA_VERSION))])

    def _verify(self) -> None:
        check = self.db.execute("PRAGMA quick_check").fetchone()
        if not check or check[0] != "ok":
            raise StoreError(f"{self.path}: SQLite integrity check failed ({check[0] if check else '?'})")
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
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
        self._pragmas()

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
        row = self.db.execute("SELECT generation FROM specs WHERE hash=?", (spec_hash,)).fetchone()
        if row is None:
            self.db.execute("INSERT INTO specs VALUES (?, ?, ?)", (spec_hash, text, time.time()))
        elif json.loads(row[0]) != json.loads(text):
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
