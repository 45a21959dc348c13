import sqlite3

import numpy as np
import pytest

from dpcheck.audit.core.store import SCHEMA_VERSION, Store, StoreError


def _put(store, index=0, world=0, synth=None):
    synth = np.arange(6.0).reshape(2, 3) if synth is None else synth
    return store.put("h", world, index, seed=7, rows_requested=2, synth=synth, seconds=0.1, worker="w", session="s")


def test_roundtrip_and_no_duplicates(tmp_path):
    with Store(tmp_path / "a.sqlite") as store:
        store.register("h", {"impl": "x"})
        assert _put(store, 0) and _put(store, 1) and _put(store, 0, world=1)
        assert not _put(store, 0, synth=np.zeros((2, 3)))  # already stored: kept, not replaced
    with Store(tmp_path / "a.sqlite") as store:
        assert store.done("h") == {(0, 0), (0, 1), (1, 0)}
        assert store.done("h", runs=1) == {(0, 0), (1, 0)}
        records = store.load("h", 2)
        assert [(r.world, r.index) for r in records] == [(0, 0), (0, 1), (1, 0)]
        np.testing.assert_array_equal(records[0].synth, np.arange(6.0).reshape(2, 3))


def test_spec_registration_detects_a_different_spec_under_the_same_hash(tmp_path):
    with Store(tmp_path / "a.sqlite") as store:
        store.register("h", {"impl": "x"})
        store.register("h", {"impl": "x"})
        with pytest.raises(StoreError, match="tampered"):
            store.register("h", {"impl": "y"})


def test_garbage_file_is_refused(tmp_path):
    path = tmp_path / "a.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StoreError, match="not a usable dpcheck audit store"):
        Store(path)


def test_foreign_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (x)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="another application"):
        Store(path)


def test_other_schema_version_is_refused(tmp_path):
    path = tmp_path / "a.sqlite"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="schema version"):
        Store(path)


def test_corrupt_run_blob_is_detected(tmp_path):
    path = tmp_path / "a.sqlite"
    with Store(path) as store:
        store.register("h", {"impl": "x"})
        _put(store)
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET data = ?", (b"\x93NUMPY garbage",))
    db.commit()
    db.close()
    with Store(path) as store, pytest.raises(StoreError, match="corrupt"):
        store.load("h", 1)


def test_truncated_database_is_refused(tmp_path):
    path = tmp_path / "a.sqlite"
    with Store(path) as store:
        store.register("h", {"impl": "x"})
        for i in range(200):
            _put(store, i, synth=np.random.default_rng(i).normal(size=(50, 3)))
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(StoreError):
        Store(path).load("h", 200)
