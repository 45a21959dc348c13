"""DP207: an exact statistic of the private data is written into what a DP pipeline releases
(a description, metadata, a checkpoint, a serialised summary) beside the noisy output."""
from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import PositionProvider

from dpcheck.analysis.domainflow import _CARRY, Flow, _loads, _not_data, _random, domain_read, is_draw, is_mechanism, is_private
from dpcheck.analysis.domainflow import reads_labels
from dpcheck.analysis.domainflow import evaluation, module_records, statements
from dpcheck.analysis.syntax import SCOPE_TYPES, call_name, dotted, name_words, param_names, target_names, value_refs, walk, words
from dpcheck.cstwalk import children
from dpcheck.rule import Rule

#: calls that write their arguments out (``json.dump``, ``pickle.dump``, ``torch.save``, ``np.save``)
_SAVE_CALLS = frozenset({"dump", "save", "savez", "savez_compressed", "safe_dump", "write_json", "save_json"})
#: owners of those calls whose ``dump``/``save`` serialise (not ``model.save()`` of weights)
_SAVE_OWNERS = frozenset({"json", "pickle", "torch", "np", "numpy", "joblib", "yaml", "cloudpickle", "dill"})
#: a function returning one of these serialises the object it belongs to
_SERIALISE_FN = frozenset({"json", "describe", "description", "metadata", "meta", "serialize", "serialise", "export"})
#: a dict stored under one of these names is the released description / checkpoint
_RELEASED_NAME = frozenset({"metadata", "meta", "description", "checkpoint", "ckpt"})
#: calls returning one number
_SCALAR_CALLS = frozenset({"int", "float", "round", "len", "max", "min", "abs", "sum", "bool"})
_LABEL_WORDS = frozenset({"y", "label", "labels", "target", "targets"})
#: a statistic reads the records' count or which of them are missing / unique
_COUNT_ATTRS = frozenset({"size", "is_unique", "hasnans"})
_FREQUENCIES = frozenset({"value_counts", "Counter", "bincount", "histogram"})
_LIST_CALLS = frozenset({"tolist", "to_list"})
#: a file written under such a path is scratch space (an out-of-core chunk, a cache), read back, not shipped
_SCRATCH_WORDS = frozenset({"tmp", "temp", "tmpdir", "tempdir", "tempfile", "mkdtemp", "mkstemp", "scratch",
                            "cache", "cached", "caches", "tmpfile", "tempfiles", "tmpfiles"})
#: ``np.save(file, arr)``: the file comes first; ``pickle.dump(obj, file)``, ``torch.save(obj, f)``: second
_FILE_FIRST = frozenset({"np", "numpy"})
_FILE_KEYWORDS = frozenset({"file", "f", "fp", "filename", "path", "fname"})
_TEXT = re.compile(r"\b(?:dump|save|savez\w*|to_json|json|metadata|meta|description|checkpoint|ckpt)\b")


def _value_nodes(expr: cst.CSTNode) -> list[cst.CSTNode]:
    """Nodes of ``expr`` whose value ``expr`` carries: not the arguments of an arbitrary call (a
    model, a split, a test), not an index or a condition."""
    out: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute):
                stack.append(node.func.value)
            if call_name(node) in _CARRY:
                stack.extend(a.value for a in node.args)
        elif isinstance(node, cst.Subscript):
            stack.append(node.value)
        elif isinstance(node, cst.IfExp):
            stack += [node.body, node.orelse]
        elif isinstance(node, cst.Attribute):
            stack.append(node.value)
        elif isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison,
                               cst.ComparisonTarget, cst.Dict, cst.List, cst.Tuple, cst.Set,
                               cst.DictElement, cst.Element, cst.StarredElement, cst.DictComp, cst.ListComp,
                               cst.SetComp, cst.GeneratorExp, cst.CompFor, cst.Await, cst.ParenthesizedWhitespace)):
            stack.extend(c for c in children(node) if isinstance(c, (cst.BaseExpression, cst.BaseDictElement,
                                                                        cst.BaseElement, cst.CompFor)))
    return out


def _exact_stat(n: cst.CSTNode, flow: Flow) -> bool:
    """Is ``n`` a read of an exact statistic of the private records: which values occur or their
    extremes (``unique``, ``min``, ``value_counts``), the record count (``X.shape[0]``, ``len(X)``,
    ``X.size``), ``is_unique``, or the private labels themselves (``y_train.tolist()``)?"""
    if isinstance(n, cst.Call) and domain_read(n, flow) is not None:
        # the label set sizes a model and is taken as public; the label frequencies are not
        return not reads_labels(n) or call_name(n) in _FREQUENCIES
    if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Attribute) and n.value.attr.value == "shape":
        first = n.slice[0].slice if n.slice else None
        return isinstance(first, cst.Index) and isinstance(first.value, cst.Integer) \
            and first.value.value == "0" and is_private(n.value.value, flow)
    if isinstance(n, cst.Attribute) and n.attr.value in _COUNT_ATTRS:
        return is_private(n.value, flow)
    if isinstance(n, cst.Call) and call_name(n) == "len" and len(n.args) == 1:
        return is_private(n.args[0].value, flow)
    if isinstance(n, cst.Call) and call_name(n) in _LIST_CALLS and isinstance(n.func, cst.Attribute):
        name = dotted(n.func.value) or ""
        return bool(words(name.split(".")[-1]) & _LABEL_WORDS) and is_private(n.func.value, flow)
    return False


def _column_names(value: cst.BaseExpression) -> bool:
    """``[f for f in features if f in CONTINUOUS_FEATURES]``, ``[c for c in df.columns if …]``: a
    list of column names filtered against a configured constant or the table's header is the
    schema, and its length a column count, not a statistic of the records."""
    if not isinstance(value, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
        return False
    for node in walk(value):
        if isinstance(node, cst.Name) and len(node.value) > 1 and node.value.isupper():
            return True
        if isinstance(node, cst.Attribute) and node.attr.value == "columns":
            return True
    return False


def _set_read(n: cst.CSTNode, flow: Flow) -> bool:
    if isinstance(n, cst.Attribute):
        return n.attr.value == "is_unique"
    return isinstance(n, cst.Call) and domain_read(n, flow) == "set"


def _guards(fn: cst.CSTNode) -> dict[cst.CSTNode, list[cst.BaseExpression]]:
    """Each small statement of ``fn`` (nested scopes left out) -> the ``if``/``while`` tests it runs under."""
    out: dict[cst.CSTNode, list[cst.BaseExpression]] = {}

    def visit(node: cst.CSTNode, tests: list[cst.BaseExpression]) -> None:
        for child in children(node):
            if type(child) in SCOPE_TYPES:
                continue
            if isinstance(child, (cst.If, cst.While)):
                inner = [*tests, child.test]
                visit(child.body, inner)
                if child.orelse is not None:
                    visit(child.orelse, inner)
            elif isinstance(child, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                if tests:
                    out[child] = tests
            else:
                visit(child, tests)

    visit(fn.body if isinstance(fn, cst.FunctionDef) else fn, [])
    return out


def _count(n: cst.CSTNode) -> bool:
    """``len(X)``, ``X.shape[0]``, ``X.size``: the record count."""
    return isinstance(n, cst.Subscript) or isinstance(n, cst.Attribute) and n.attr.value == "size" \
        or isinstance(n, cst.Call) and call_name(n) == "len"


def _noised(expr: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and (is_draw(n) or is_mechanism(n)) for n in walk(expr))


def _path_words(expr: cst.CSTNode) -> set[str]:
    out = name_words(expr)
    for n in walk(expr):
        if isinstance(n, cst.SimpleString):
            out |= {w for w in re.split(r"[^a-z0-9]+", n.value.lower()) if w}
    return out


def _scratch_write(call: cst.Call, owner: str, fn: cst.CSTNode) -> bool:
    """``pickle.dump(chunk, handle)`` with ``handle`` opened on ``os.path.join(tmp_dir, ...)``,
    ``np.save(cache_dir + "/x.npy", a)``, ``torch.save(s, tempfile.mktemp())``: a file in a temporary or
    cache folder is scratch space the program reads back, not what it releases."""
    positional = [a.value for a in call.args if a.keyword is None]
    files = [a.value for a in call.args if a.keyword is not None and a.keyword.value in _FILE_KEYWORDS]
    if owner.split(".")[0] in _FILE_FIRST:
        files += positional[:1]
    else:
        files += positional[1:2]
    handles = {f.value for f in files if isinstance(f, cst.Name)}
    exprs: list[cst.CSTNode] = list(files)
    if handles:
        for w in (n for n in walk(fn) if isinstance(n, cst.With)):
            for item in w.items:
                if item.asname is not None and isinstance(item.asname.name, cst.Name) \
                        and item.asname.name.value in handles:
                    exprs.append(item.item)
        for stmt in statements(fn):  # ``handle = open(path, "wb")``
            if isinstance(stmt, cst.Assign) and any(target_names(t.target) & handles for t in stmt.targets):
                exprs.append(stmt.value)
    return any(_path_words(e) & _SCRATCH_WORDS for e in exprs)


class _Taint:
    """Names (and ``self.x``) holding an exact statistic of the records, per function; the records
    are the function's data-named parameters, what it loads, and what is computed from them."""

    def __init__(self, fn: cst.CSTNode, seed: dict[str, set[cst.BaseExpression]],
                 records: frozenset[str] = frozenset()) -> None:
        self.flow = Flow()
        if isinstance(fn, cst.FunctionDef):
            params = param_names(fn)
            self.flow.private = {p for p in params if not _not_data(p)} | (set(records) - set(params))
        self.names: dict[str, set[cst.BaseExpression]] = {k: set(v) for k, v in seed.items()}

    def sources(self, expr: cst.CSTNode) -> set[cst.BaseExpression]:
        if isinstance(expr, (cst.Dict, cst.List, cst.Tuple)):  # each entry noised or not on its own
            return {s for el in expr.elements if not isinstance(el, (cst.StarredDictElement, cst.StarredElement))
                    for s in self.sources(el.value)}
        if _noised(expr):
            return set()
        out: set[cst.BaseExpression] = set()
        for n in _value_nodes(expr):
            name = dotted(n)
            if name is not None and name in self.names:
                out |= self.names[name]
            elif _exact_stat(n, self.flow):
                out.add(n)  # type: ignore[arg-type]
        return out

    def decisions(self, tests: list[cst.BaseExpression]) -> set[cst.BaseExpression]:
        """Value-set reads deciding a branch (``if len(np.unique(x)) <= 2:``, ``if col.is_unique:``):
        what the branch assigns (a domain size, a column's kind) depends on which values occur."""
        out: set[cst.BaseExpression] = set()
        for test in tests:
            out |= {s for s in self.sources(test) if _set_read(s, self.flow)}
        return out

    def run(self, fn: cst.CSTNode) -> None:
        guards = _guards(fn)
        for _ in range(2):
            for stmt in statements(fn):
                if isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and stmt.value is not None:
                    targets: set[str] = set()
                    for t in (stmt.targets if isinstance(stmt, cst.Assign) else [stmt]):
                        targets |= target_names(t.target)
                        if isinstance(t.target, cst.Subscript) and dotted(t.target.value) is not None:
                            targets.add(dotted(t.target.value))  # type: ignore[arg-type]  # ``d[k] = v`` fills d
                    srcs = self.sources(stmt.value) | self.decisions(guards.get(stmt, []))
                    for t in targets:
                        if srcs:
                            self.names.setdefault(t, set()).update(srcs)
                    if _random(stmt.value) or _column_names(stmt.value):  # simulated data or a schema, not records
                        self.flow.private -= targets
                    elif _loads(stmt.value) or value_refs(stmt.value) & self.flow.private:
                        self.flow.private |= {t for t in targets if not _not_data(t)}


_PERTURB_WORDS = frozenset({"perturb", "perturbed", "privatize", "privatise", "randomize", "randomise", "ldp",
                            "privatized", "privatised", "randomized", "randomised"})


def _fed_perturbed(module: cst.Module) -> list[cst.FunctionDef]:
    """Methods every call of which in ``module`` (``self.fit_transform(raw)``; one call at least) passes, as
    the first argument, a local the caller reassigned from a local-DP perturbation before the call
    (``raw = self.ldp.perturb_ratings(raw)``): the statistics they take are of the randomised reports."""
    methods = [s for c in walk(module) if isinstance(c, cst.ClassDef) for s in c.body.body
               if isinstance(s, cst.FunctionDef)]
    names = [m.name.value for m in methods]
    out: list[cst.FunctionDef] = []
    for m in methods:
        name = m.name.value
        if names.count(name) != 1 or name.startswith("__"):
            continue
        # ``self.encoder.fit_transform(x)`` calls another object's method of the same name
        callers = [(fn, c) for fn in _methods(module) for c in walk(fn.body)
                   if isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute) and c.func.attr.value == name
                   and not (dotted(c.func.value) or "").startswith("self.")]
        if not callers or any(not (isinstance(c.func.value, cst.Name) and c.func.value.value == "self")
                              for _, c in callers):  # type: ignore[union-attr]
            continue
        ok = True
        for fn, call in callers:
            first = call.args[0].value if call.args and call.args[0].keyword is None else None
            if not isinstance(first, cst.Name):
                ok = False
                break
            ok = False
            for stmt in walk(fn.body):
                if stmt is call:
                    break  # only assignments before the call
                if isinstance(stmt, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == first.value
                                                        for t in stmt.targets) \
                        and isinstance(stmt.value, cst.Call) and words(call_name(stmt.value) or "") & _PERTURB_WORDS \
                        and any(first.value in value_refs(a.value) for a in stmt.value.args):
                    ok = True
            if not ok:
                break
        if ok:
            out.append(m)
    return out


def _methods(node: cst.CSTNode) -> list[cst.FunctionDef]:
    return [n for n in walk(node) if isinstance(n, cst.FunctionDef)]


class ExactStatisticReleased(Rule):
    id = "DP207"
    name = "exact-statistic-released"
    category = "metadata"
    severity = "error"
    summary = ("an exact statistic of the private data (value set, extremes, record count, missing rate, labels) "
               "is written into the released description, metadata or checkpoint")
    rationale = (
        "A DP release covers only what went through the mechanism. A synthesizer's description, a model's "
        "checkpoint or a metadata file shipped with it is released too: an exact value set (`unique()`, "
        "`value_counts()`), the private extremes (`min()`/`max()`), the record count (`len(df)`, "
        "`df.shape[0]`), a missing-value fraction (`data.size - data.dropna().size`), an `is_unique` flag or "
        "the private labels (`y_train.tolist()`) stored there is published without noise, so one record "
        "changes it; so is a choice made from the values present (a column stored as categorical because "
        "`nunique() <= 10`, as binary because its unique values are 0/1). Reported where such a statistic is read when it reaches a dict returned by a "
        "serialising method (`to_json`, `describe`, `get_metadata`), a dict named metadata / description / "
        "checkpoint, or `json.dump` / `pickle.dump` / `torch.save` / `np.save`, in DP code. Not reported: "
        "values with noise drawn in the same expression, public inputs, statistics of test or synthetic "
        "data, a local number (`n_meta = int(ids.max()) + 1`, a fallback for what a metadata file holds), a file "
        "written to a temporary or cache folder (`os.path.join(tmp_dir, ...)`, `tempfile`, `cache_dir`): scratch "
        "space the program reads back, not a release. Fix: store only public schema (declared domains, bounds) or DP estimates charged to the "
        "budget."
    )
    TRIGGERS = ("dump", "save", "json", "meta", "description", "describe", "checkpoint", "ckpt")
    requires_dp_context = True

    @classmethod
    def applies_to(cls, source: str) -> bool:
        return super().applies_to(source) and _TEXT.search(source) is not None

    VALID = (
        # (fp47) the scaler's median is taken of ratings every caller perturbed locally first: post-processing
        """
import pickle
class RatingPipeline:
    def __init__(self, ldp, epsilon=1.0):
        self.ldp, self.epsilon = ldp, epsilon
    def prepare(self):
        raw = self.load()
        raw = self.ldp.perturb_ratings(raw, column="rating")
        return self.fit_scaler(raw)
    def fit_scaler(self, frame):
        self.center = frame["rating"].median()
        return frame
    def save(self, path):
        with open(path, "wb") as fh:
            pickle.dump({"center": self.center}, fh)
""",
        # ordinary ML: a scaler's mean pickled with a model trained without any privacy claim
        """
import pickle
def save_scaler(frame, path):
    stats = {"mean": float(frame["x"].mean())}
    with open(path, "wb") as fh:
        pickle.dump(stats, fh)
""",
        # an out-of-core chunk of per-group maxima pickled to a scratch folder and read back later
        """
import os
import pickle
import numpy as np
def chunk_max(frame, idx, tmp_dir, epsilon):
    part = frame.groupby(["edge"]).value.max().reset_index()
    with open(os.path.join(tmp_dir, "part_%d.p" % idx), "wb") as handle:
        pickle.dump(part, handle)
    return np.random.laplace(0, 1 / epsilon)
""",
        # the exact value set cached on disk between two runs of the same (noisy) computation
        """
import numpy as np
def cached_domain(records, cache_dir, epsilon):
    values = np.unique(records)
    np.save(cache_dir + "/values.npy", values)
    return np.bincount(records) + np.random.laplace(0, 1 / epsilon, int(records.max()) + 1)
""",
        # a local number named for the metadata file it falls back from is not stored anywhere
        """
import json
import numpy as np
def load_edges(folder, epsilon):
    n_meta = json.load(open(folder + "/meta.json")).get("n")
    src, dst = np.loadtxt(folder + "/edges.csv", dtype=int, unpack=True)
    if n_meta is None:
        n_meta = int(max(src.max(), dst.max()) + 1)
    keep = np.random.binomial(1, np.exp(epsilon) / (1 + np.exp(epsilon)), len(src)) > 0
    return n_meta, src[keep], dst[keep]
""",
        # the same fallback sizing a noisy histogram
        """
import numpy as np
def noisy_counts(users, epsilon, path):
    users_meta = np.load(path + "/users.npy")
    if users_meta.size == 0:
        users_meta = len(np.unique(users))
    counts = np.bincount(users, minlength=int(users_meta))
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
        # the count of configured continuous columns present in the table is schema, not a statistic
        """
import json
CONTINUOUS = ["age", "bp", "hr"]
def train(data_df, features, noise_multiplier, path):
    continuous_only = [f for f in features if f in CONTINUOUS]
    meta = {"continuous_count": len(continuous_only), "noise_multiplier": noise_multiplier}
    json.dump(meta, open(path, "w"))
""",
        # the column kinds are declared, only the counts come from the data (with noise)
        """
import json
import numpy as np
def describe_columns(frame, kinds, epsilon, path):
    schema = {}
    for col in frame.columns:
        if kinds[col] == "categorical":
            kind = "categorical"
        else:
            kind = "numerical"
        schema[col] = {"kind": kind, "count": float(len(frame) + np.random.laplace(0, 1 / epsilon))}
    json.dump(schema, open(path, "w"))
""",
        # the description holds the declared domain and the noisy distribution
        """
import numpy as np
class Attribute:
    def __init__(self, data, domain, epsilon):
        self.bins = np.array(domain)
        counts = data.value_counts().reindex(domain, fill_value=0)
        self.probs = counts + np.random.laplace(0, 1 / epsilon, size=len(domain))
    def to_json(self):
        return {"bins": self.bins.tolist(), "probs": self.probs.tolist()}
""",
        # a noisy count written to the metadata
        """
import json, numpy as np
def release(df, epsilon, path):
    n_noisy = len(df) + np.random.laplace(0, 1 / epsilon)
    metadata = {"num_rows": n_noisy, "columns": list(df.columns)}
    json.dump(metadata, open(path, "w"))
""",
        # the checkpoint stores the public label set and the DP model
        """
import torch
def train(model, x_train, y_train, noise_multiplier, classes, path):
    torch.save({"model": model.state_dict(), "classes": classes, "sigma": noise_multiplier}, path)
""",
        # statistics of the synthetic output and of the test split are evaluation, not release
        """
import json, numpy as np
def evaluate(synth, x_test, epsilon, path):
    report = {"synthetic_max": float(synth.max()), "n_test": len(x_test), "epsilon": epsilon}
    json.dump(report, open(path, "w"))
    return np.random.laplace(0, 1 / epsilon)
""",
    )

    INVALID = (
        # (fp47) twin: the scaler is also fitted on the raw ratings (one caller skips the perturbation)
        """
import pickle
class RatingPipeline:
    def __init__(self, ldp, epsilon=1.0):
        self.ldp, self.epsilon = ldp, epsilon
    def prepare(self):
        raw = self.load()
        raw = self.ldp.perturb_ratings(raw, column="rating")
        return self.fit_scaler(raw)
    def refit(self):
        return self.fit_scaler(self.load())
    def fit_scaler(self, frame):
        self.center = frame["rating"].median()  # <-
        return frame
    def save(self, path):
        with open(path, "wb") as fh:
            pickle.dump({"center": self.center}, fh)
""",
        # the twin of the scratch chunk: the same maxima pickled into the published output folder
        """
import os
import pickle
import numpy as np
def chunk_max(frame, idx, out_dir, epsilon):
    part = frame.groupby(["edge"]).value.max().reset_index()  # <-
    with open(os.path.join(out_dir, "release_%d.p" % idx), "wb") as handle:
        pickle.dump(part, handle)
    return np.random.laplace(0, 1 / epsilon)
""",
        # the value set saved beside the noisy counts that are shipped
        """
import numpy as np
def published_domain(records, out_dir, epsilon):
    values = np.unique(records)  # <-
    np.save(out_dir + "/values.npy", values)
    return np.bincount(records) + np.random.laplace(0, 1 / epsilon, int(records.max()) + 1)
""",
        # the exact maximum stored under a key of a metadata record that is written out
        """
import json
import numpy as np
def load_edges(folder, epsilon, out):
    meta = {}
    src, dst = np.loadtxt(folder + "/edges.csv", dtype=int, unpack=True)
    meta["n"] = int(max(src.max(), dst.max()) + 1)  # <-
    keep = np.random.binomial(1, np.exp(epsilon) / (1 + np.exp(epsilon)), len(src)) > 0
    json.dump(meta, open(out, "w"))
    return src[keep], dst[keep]
""",
        # a metadata record built with dict(...) from the distinct users
        """
import json
import numpy as np
def noisy_counts(users, epsilon, path):
    metadata = dict(users=len(np.unique(users)))  # <-
    json.dump(metadata, open(path + "/meta.json", "w"))
    counts = np.bincount(users)
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
        # its twin stores the number of records with the configured columns
        """
import json
CONTINUOUS = ["age", "bp", "hr"]
def train(data_df, features, noise_multiplier, path):
    continuous_only = [f for f in features if f in CONTINUOUS]
    meta = {"n_records": len(data_df[continuous_only]), "noise_multiplier": noise_multiplier}  # <-
    json.dump(meta, open(path, "w"))
""",
        # whether a column is categorical decided by its distinct private values, saved beside noisy counts
        """
import json
import numpy as np
def describe_columns(frame, epsilon, path):
    schema = {}
    for col in frame.columns:
        if frame[col].nunique() <= 10:  # <-
            kind = "categorical"
        else:
            kind = "numerical"
        schema[col] = {"kind": kind, "count": float(np.random.laplace(0, 1 / epsilon))}
    json.dump(schema, open(path, "w"))
""",
        # a synthesizer's attribute description releases the private extremes and value set
        """
import numpy as np
class Attribute:
    def __init__(self, data, epsilon):
        self.data = data.dropna()
        self.lo = float(self.data.min())  # <-
        self.hi = float(self.data.max())  # <-
        self.bins = self.data.unique()  # <-
        self.probs = np.random.laplace(0, 1 / epsilon, size=len(self.bins))
    def to_json(self):
        return {"min": self.lo, "max": self.hi, "bins": self.bins.tolist(), "probs": self.probs.tolist()}
""",
        # the exact record count in the released metadata (tensorflow pipeline)
        """
import json
import tensorflow as tf
def publish(records, epsilon, path):
    noisy = tf.random.normal([10], stddev=1 / epsilon)
    metadata = {"num_records": records.shape[0], "noise": noisy.numpy().tolist()}  # <-
    json.dump(metadata, open(path, "w"))
""",
        # the label distribution saved into a DP model's checkpoint
        """
import torch
import pandas as pd
def train(model, x_train, y_train, noise_multiplier, path):
    dist = pd.Series(y_train).value_counts(normalize=True).to_dict()  # <-
    torch.save({"model": model.state_dict(), "label_dist": dist}, path)
""",
        # the private labels and the missing rate pickled beside the noisy marginals
        """
import pickle
import numpy as np
def describe(table, labels, epsilon):
    missing = (table.size - table.dropna().size) / table.size  # <-
    marginals = np.random.laplace(0, 1 / epsilon, size=8)
    with open("release.pkl", "wb") as f:
        pickle.dump({"marginals": marginals, "missing": missing, "labels": labels.tolist()}, f)  # <-
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        seeds: dict[cst.FunctionDef, dict[str, set[cst.BaseExpression]]] = {}
        for cls in (n for n in walk(node) if isinstance(n, cst.ClassDef)):
            methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
            attrs: dict[str, set[cst.BaseExpression]] = {}
            for m in methods:
                taint = _Taint(m, {})
                taint.run(m)
                for k, v in taint.names.items():
                    if k.startswith("self."):
                        attrs.setdefault(k, set()).update(v)
            for m in methods:
                seeds[m] = attrs
        records = module_records(node)
        reported: set[cst.BaseExpression] = set()
        lines: set[int] = set()
        perturbed_only = _fed_perturbed(node)
        for fn in [node, *_methods(node)]:
            if evaluation(fn):
                continue
            taint = _Taint(fn, seeds.get(fn, {}) if isinstance(fn, cst.FunctionDef) else {}, records)
            taint.run(fn)
            for expr, where in self._sinks(fn):
                found = taint.sources(expr)
                if not isinstance(expr, (cst.Dict, cst.DictComp)):
                    # a count sizes arrays everywhere; it is a released statistic as a described field
                    found = {s for s in found if not _count(s)}
                for src in sorted(found - reported, key=self._position):
                    reported.add(src)
                    if any(any(m is src for m in walk(m_fn.body)) for m_fn in perturbed_only):
                        continue  # (fp47) every call hands it locally perturbed records: post-processing
                    line = self.ctx.analysis.line_of(src)
                    if line in lines:
                        continue
                    lines.add(line)
                    code = self.ctx.analysis.code(src).strip()
                    self.report(src, f"`{code}` is an exact statistic of the private data and it is {where} "
                                     f"without noise: one record changes the release; store public schema or "
                                     f"a DP estimate instead")

    def _position(self, node: cst.CSTNode) -> tuple[int, int]:
        start = self.ctx.metadata(PositionProvider)[node].start
        return start.line, start.column

    @staticmethod
    def _sinks(fn: cst.CSTNode) -> list[tuple[cst.BaseExpression, str]]:
        out: list[tuple[cst.BaseExpression, str]] = []
        serialiser = isinstance(fn, cst.FunctionDef) and bool(words(fn.name.value) & _SERIALISE_FN)
        for stmt in statements(fn):
            if isinstance(stmt, cst.Return) and stmt.value is not None and serialiser \
                    and isinstance(stmt.value, (cst.Dict, cst.DictComp)):
                out.append((stmt.value, f"returned by `{fn.name.value}`"))  # type: ignore[union-attr]
            elif isinstance(stmt, cst.Assign) and isinstance(stmt.value, (cst.Dict, cst.Call)):
                names = {n for t in stmt.targets for n in value_refs(t.target)}
                subs = [t.target for t in stmt.targets if isinstance(t.target, cst.Subscript)]
                keys = {s.value for sub in subs for el in sub.slice if isinstance(el.slice, cst.Index)
                        for s in [el.slice.value] if isinstance(s, cst.SimpleString)}
                # a local number (``n_meta = int(ids.max()) + 1``, a fallback for a value a metadata file
                # holds) is no stored description: only a record, an attribute or an item is
                scalar = isinstance(stmt.value, cst.Call) and call_name(stmt.value) in _SCALAR_CALLS \
                    and all(isinstance(t.target, cst.Name) for t in stmt.targets)
                if not scalar and (any(words(n.split(".")[-1]) & _RELEASED_NAME for n in names)
                                   or any(words(k.strip("'\"")) & _RELEASED_NAME for k in keys)):
                    values = [a.value for a in stmt.value.args] if isinstance(stmt.value, cst.Call) else [stmt.value]
                    out += [(v, "stored in the released metadata") for v in values]
            for call in (n for n in walk(stmt, into_scopes=False) if isinstance(n, cst.Call)):
                owner = dotted(call.func.value) if isinstance(call.func, cst.Attribute) else None
                if call_name(call) in _SAVE_CALLS and owner is not None \
                        and owner.split(".")[0] in _SAVE_OWNERS and not _scratch_write(call, owner, fn):
                    out += [(a.value, f"written out by `{owner}.{call_name(call)}`") for a in call.args]
        return out
