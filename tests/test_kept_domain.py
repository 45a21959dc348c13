"""Project flow: the private data's own range or categories kept by a fitting method of an encoder
class for its other methods (``kept_domain``), reported in modules the DP code imports."""
from __future__ import annotations

from pathlib import Path

import pytest


#: a DP module of a library package: the package re-exports it, so it is not the pipeline's top
_DP_SYNTH = """
from opacus import PrivacyEngine
from .encoders import Encoder

class DPSynth:
    def __init__(self, preprocessor=None, epsilon=1.0, noise_multiplier=1.0):
        self.pre = preprocessor
        self.epsilon = epsilon
    def fit(self, data):
        if isinstance(self.pre, Encoder):
            self.pre.fit(data)
        return PrivacyEngine()
"""
_INIT = "from .synth import DPSynth\n"

#: (encoder module, the lines findings must be on; () for a valid twin)
CASES = {
    # LDP bucket encoder: the bucket range from the users' raw values, kept as edges for encode()
    "builtin-extremes-kept-as-edges": ("""
import numpy as np
class Encoder:
    def __init__(self, k=10, clip_range=None):
        self.k = k
        self.clip_range = clip_range
    def fit(self, data):
        values = list(data)
        lo = min(values)
        hi = max(values)
        self.edges = np.linspace(lo, hi, self.k + 1)
        return self
    def encode(self, v):
        return int(np.searchsorted(self.edges, v))
""", (9, 10)),
    # the same encoder given its range by the caller
    "given-range-kept-as-edges": ("""
import numpy as np
class Encoder:
    def __init__(self, k=10, clip_range=(0.0, 1.0)):
        self.k = k
        self.clip_range = clip_range
    def fit(self, data):
        lo, hi = self.clip_range
        self.edges = np.linspace(lo, hi, self.k + 1)
        return self
    def encode(self, v):
        return int(np.searchsorted(self.edges, v))
""", ()),
    # the vocabulary is the distinct raw values, handed to a method that stores it
    "vocabulary-from-distinct-values": ("""
class Encoder:
    def __init__(self, categories=None):
        self.index = {}
        self.values = []
        if categories is not None:
            self._build(categories)
    def _build(self, categories):
        for c in categories:
            self.index[c] = len(self.values)
            self.values.append(c)
    def fit(self, data):
        self._build(list(dict.fromkeys(data)))
        return self
    def decode(self, i):
        return self.values[i]
""", 13),
    # the vocabulary given at construction: the fit only validates
    "vocabulary-given": ("""
class Encoder:
    def __init__(self, categories=("a", "b")):
        self.index = {}
        self.values = []
        self._build(categories)
    def _build(self, categories):
        for c in categories:
            self.index[c] = len(self.values)
            self.values.append(c)
    def fit(self, data):
        assert all(v in self.index for v in data)
        return self
    def decode(self, i):
        return self.values[i]
""", ()),
    # a table transformer's hook returns the column's extremes as its fitted state
    "hook-returns-extremes": ("""
import numpy as np
class Encoder:
    def __init__(self, bins=10):
        self.bins = bins
    def _fit_continuous(self, data):
        name = data.columns[0]
        lo = data[name].min()
        hi = data[name].max()
        return {"min": lo, "max": hi, "bins": self.bins}
    def _inverse_transform_continuous(self, info, col):
        width = (info["max"] - info["min"]) / self.bins
        return info["min"] + np.argmax(col, axis=1) * width
""", (8, 9)),
    # a helper returns each column's extremes and observed values; fit keeps them for transform
    "helper-metadata-kept": ("""
import pandas as pd
def get_metadata(data, categorical=()):
    meta = []
    df = pd.DataFrame(data)
    for c in df:
        col = df[c]
        if c in categorical:
            meta.append({"bins": col.value_counts().index.tolist()})
        else:
            meta.append({"min": col.min(), "max": col.max()})
    return meta
class Encoder:
    def fit(self, data, categorical=()):
        self.meta = get_metadata(data, categorical)
    def transform(self, data):
        return [m for m in self.meta]
""", (9, 11)),
    # extremes of each record (along its own axis) and a statistic never kept
    "per-record-and-unkept": ("""
import numpy as np
class Encoder:
    def fit(self, data):
        self.row_max = np.max(data, axis=1)
        top = data.max()
        print(top)
        return self
    def transform(self, data):
        return data / self.row_max
""", ()),
    # the class set of the prediction target sizes the model: not reported here
    "label-classes": ("""
import numpy as np
class Encoder:
    def fit(self, X, y=None):
        labels = y
        self.classes = np.unique(labels)
        return self
    def transform(self, X):
        return X, self.classes
""", ()),
    # the table's schema (its column names) kept for the other methods: not a statistic of the records
    "schema-kept": ("""
class Encoder:
    def __init__(self, frame, budget):
        self.frame = frame
        self.cols = set(frame.columns.values.tolist())
    def query(self, c):
        assert c in self.cols
        return self.frame[c]
""", ()),
    # an aggregator keeping each user's exact maximum to rescale the reports later
    "user-maxima-kept": ("""
import numpy as np
class Encoder:
    def __init__(self, k):
        self.maxima = []
    def encode(self, data_r, eps=None):
        self.maxima.append(data_r.max())
        return data_r
    def normalize(self, reports):
        return reports * np.mean(self.maxima)
""", 7),
    # a helper method returns the distinct values of a field of the records; fit keeps them as the
    # value order of the noisy table that sample() decodes with
    "helper-method-unique-values": ("""
import numpy as np
class Encoder:
    def __init__(self, fields):
        self.fields = fields
        self.orders = {}
    def _values(self, dataset, field):
        out = []
        for record in dataset.to_list():
            out.append(record.get(field))
        return tuple(np.unique(out))
    def fit(self, dataset):
        for f in self.fields:
            self.orders[f] = self._values(dataset, f)
    def sample(self, n):
        return [self.orders[f][0] for f in self.fields]
""", 11),
    # the same generator with the value order given by the schema
    "helper-method-given-values": ("""
import numpy as np
class Encoder:
    def __init__(self, fields, domain):
        self.fields = fields
        self.domain = domain
        self.orders = {}
    def _values(self, field):
        return tuple(self.domain[field])
    def fit(self, dataset):
        for f in self.fields:
            self.orders[f] = self._values(f)
    def sample(self, n):
        return [self.orders[f][0] for f in self.fields]
""", ()),
    # the number of distinct speakers (the target column) sizes the per-class index
    "label-column-key": ("""
import numpy as np
class Encoder:
    def __init__(self, table):
        self.data = self._load(table)
    def _load(self, table):
        k = len(set(table["labels"]))
        return {c: np.array(table.loc[table["labels"] == c]["file"]) for c in range(k)}
    def __getitem__(self, i):
        return self.data[i]
""", ()),
    # (dp202fp45) ``fit`` duplicates what ``fit_transform`` does without calling it: only the live copy
    # (the pipeline calls ``fit_transform``) is reported
    "fit-repeated-by-fit-transform": ("""
import numpy as np
class Encoder:
    def __init__(self, k=10):
        self.k = k
    def fit(self, data):
        self.lo = np.array([min(data[:, i]) for i in range(data.shape[1])])
        return self
    def fit_transform(self, data):
        self.lo = np.array([min(data[:, i]) for i in range(data.shape[1])])
        return data - self.lo
    def transform(self, data):
        return data - self.lo
""", (10,)),
    # the twin: ``fit_transform`` calls ``self.fit``, so ``fit`` is the live path and is reported
    "fit-called-by-fit-transform": ("""
import numpy as np
class Encoder:
    def __init__(self, k=10):
        self.k = k
    def fit(self, data):
        self.lo = np.array([min(data[:, i]) for i in range(data.shape[1])])
        return self
    def fit_transform(self, data):
        self.fit(data)
        return data - self.lo
    def transform(self, data):
        return data - self.lo
""", 7),
    # the twin: ``fit_transform`` reads a different statistic, so ``fit``'s own read is reported too
    "fit-differs-from-fit-transform": ("""
import numpy as np
class Encoder:
    def __init__(self, k=10):
        self.k = k
    def fit(self, data):
        self.lo = np.array([min(data[:, i]) for i in range(data.shape[1])])
        return self
    def fit_transform(self, data):
        self.lo = np.array([max(data[:, i]) for i in range(data.shape[1])])
        return data - self.lo
    def transform(self, data):
        return data - self.lo
""", (7, 10)),
    # state written but no other method reads it
    "kept-but-unused": ("""
class Encoder:
    def fit(self, data):
        self.lo = min(data)
        return self
    def transform(self, data):
        return data
""", ()),
}


def _join(tmp_path: Path, encoder: str, dp: str = _DP_SYNTH) -> list:
    from test_scan_support import join_project

    return [f for f in join_project(tmp_path / "proj" / "pkg", {"__init__.py": _INIT, "synth.py": dp, "encoders.py": encoder}) if f.path == "encoders.py" and "kept as" in f.message]


@pytest.mark.parametrize("name", sorted(CASES))
def test_kept_domain_case(tmp_path: Path, name: str) -> None:
    encoder, lines = CASES[name]
    want = sorted(lines) if isinstance(lines, tuple) else [lines]
    assert sorted({f.line for f in _join(tmp_path, encoder)}) == want


def test_not_imported_by_dp_code(tmp_path: Path) -> None:
    """The same encoder imported only by a module with no DP claim is not reported."""
    plain = _DP_SYNTH.replace("from opacus import PrivacyEngine\n", "").replace("return PrivacyEngine()", "return 1") \
        .replace("epsilon=1.0, noise_multiplier=1.0", "k=1").replace("self.epsilon = epsilon", "self.k = k") \
        .replace("class DPSynth", "class Synth")
    assert _join(tmp_path, CASES["builtin-extremes-kept-as-edges"][0], dp=plain) == []
