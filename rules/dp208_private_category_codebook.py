"""DP208: a per-column codebook of the private table's observed categories decodes the DP output."""
from __future__ import annotations

import os
import re

import libcst as cst

from dpcheck.analysis.syntax import COMPREHENSIONS, call_name, dotted, string_text, target_names, walk, words
from dpcheck.codetext import code_and_fstrings
from dpcheck.rule import Rule

#: calls whose result is the set of values a column holds
_SET_METHODS = frozenset({"unique", "nunique", "value_counts", "drop_duplicates"})
_SET_FUNCS = frozenset({"unique", "set", "Counter", "get_dummies", "factorize"})
#: words of an iterable that runs over a table's columns
_COLUMN_WORDS = frozenset({
    "col", "cols", "column", "columns", "attr", "attrs", "attribute", "attributes", "feature", "features",
    "field", "fields", "var", "vars", "variable", "variables", "categorical", "cat", "cats", "discrete",
})
#: words of a frame that is not the private table
_NOT_PRIVATE = frozenset({
    "synth", "synthetic", "syn", "fake", "generated", "gen", "public", "pub", "sample", "samples", "sampled",
    "pred", "preds", "prediction", "predictions", "output", "decoded", "noisy", "released", "domain", "schema",
    "meta", "metadata", "config", "cfg", "ref", "reference", "real", "val", "valid", "test", "holdout",
})
#: words of a function that maps generated codes back to values
_DECODE_WORDS = frozenset({
    "decode", "decoder", "decoding", "inverse", "invert", "inv", "reverse", "revert", "postprocess",
    "untransform", "detransform", "decompress", "denormalize", "denormalise", "reconstruct",
})
#: words of a function that only measures or inspects (utility evaluation, attacks, plots)
_EVAL_WORDS = frozenset({
    "eval", "evaluate", "evaluation", "metric", "metrics", "score", "utility", "fidelity", "compare",
    "plot", "attack", "mia", "report", "summary", "summarize", "describe", "profile", "test", "check",
    "error", "errors", "distance", "similarity", "accuracy", "benchmark",
})
_DP_TEXT = re.compile(
    r"epsilon|privacy|private|differential|laplace|noise_multiplier|opacus|privbayes|dpsgd|dp_|_dp\b|\bdp", re.I)
_DP_PATH_WORDS = frozenset({"dp", "private", "privacy", "priv", "differential", "ldp", "privbayes", "dpwgan", "dpgan"})


def _dp_path(path: str) -> bool:
    """A folder or file within the last three path parts is named for DP (``dpwgan/``, ``dp-synthetic-*``)."""
    parts = re.split(r"[\\/]", path)[-3:]
    return any(words(re.sub(r"[@+.-]", "_", p)) & _DP_PATH_WORDS for p in parts)


#: (b85) a module that runs a DP mechanism (its package's name is not enough)
_DP_MECHANISM = re.compile(r"epsilon|noise_multiplier|laplace|opacus|privacy_engine|add_dp_noise|dp_sgd|dpsgd|"
                           r"privbayes|\bsigma\b|budget", re.I)
_MAX_PROJECT_FILES = 400


def _package_files(path: str) -> list[str]:
    """The ``.py`` files of the package ``path`` lies in (up to its topmost folder with an ``__init__.py``)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return []
    root = folder
    while os.path.isfile(os.path.join(os.path.dirname(root), "__init__.py")):
        root = os.path.dirname(root)
    out: list[str] = []
    for base, dirs, files in os.walk(os.path.dirname(root)):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("tests", "test", "docs"))
        out += [os.path.join(base, f) for f in sorted(files) if f.endswith(".py")]
        if len(out) > _MAX_PROJECT_FILES:
            return []
    return out


def _unused_by_dp(path: str, source: str) -> bool:
    """(b85) A module of a DP-named package that no module running a DP mechanism uses: no project file other
    than a package ``__init__`` (a re-export) names the module or one of its top-level classes or functions
    while calibrating or adding noise. Its codebook decodes nothing the DP model releases (a standalone
    preprocessing helper of the package)."""
    if not path or not os.path.isfile(path):
        return False
    files = _package_files(path)
    if not files:
        return False
    stem = os.path.splitext(os.path.basename(path))[0]
    names = {stem, *re.findall(r"(?m)^(?:class|def)\s+(\w+)", source)}
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
    me = os.path.abspath(path)
    for other in files:
        if os.path.abspath(other) == me or os.path.basename(other) == "__init__.py":
            continue
        try:
            with open(other, encoding="utf-8", errors="replace") as handle:
                text = handle.read(400_000)
        except OSError:
            continue
        if pattern.search(text) and _DP_MECHANISM.search(text):
            return False
    return True


def _root(expr: cst.BaseExpression) -> str:
    while isinstance(expr, (cst.Subscript, cst.Attribute, cst.Call)):
        expr = expr.value if not isinstance(expr, cst.Call) else expr.func
    return expr.value if isinstance(expr, cst.Name) else ""


def _column_of(node: cst.CSTNode, loop_vars: set[str]) -> cst.Subscript | None:
    """``frame[col]`` with ``col`` a loop variable, inside ``node``, on a frame not named public/synthetic."""
    for sub in walk(node):
        if isinstance(sub, cst.Subscript) and len(sub.slice) == 1:
            index = sub.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Name) and index.value.value in loop_vars:
                frame = dotted(sub.value) or _root(sub.value)
                if frame and not words(frame) & _NOT_PRIVATE and "self" != frame:
                    return sub
    return None


def _value_set(expr: cst.CSTNode, loop_vars: set[str]) -> bool:
    """``expr`` reads which values a loop column holds: ``df[c].unique()``, ``np.unique(df[c])``,
    ``set(df[c])``, ``LabelEncoder().fit(df[c])``, ``df[c].astype('category').cat.categories``."""
    for node in walk(expr):
        if isinstance(node, cst.Call):
            name = call_name(node)
            func = node.func
            if name in _SET_METHODS and isinstance(func, cst.Attribute) and _column_of(func.value, loop_vars):
                return True
            if node.args and _column_of(node.args[0].value, loop_vars) and (
                    name in _SET_FUNCS or name in ("fit", "fit_transform") and "Encoder" in (dotted(func) or "")
                    or name in ("fit", "fit_transform") and isinstance(func, cst.Attribute)
                    and isinstance(func.value, cst.Call) and "Encoder" in call_name(func.value)):
                return True
        elif isinstance(node, cst.Attribute) and node.attr.value in ("categories", "classes_") \
                and _column_of(node.value, loop_vars):
            return True
    return False


def _factorized(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and call_name(expr) == "factorize"


def _columns_loop(iterable: cst.BaseExpression) -> bool:
    text = dotted(iterable) or ""
    if isinstance(iterable, cst.Call) and call_name(iterable) in ("keys", "items", "enumerate", "sorted", "list", "zip"):
        inner = iterable.args[0].value if iterable.args else iterable.func
        if isinstance(iterable.func, cst.Attribute) and call_name(iterable) in ("keys", "items"):
            inner = iterable.func.value
        return _columns_loop(inner)
    if isinstance(iterable, cst.Attribute) and iterable.attr.value == "columns":
        return True
    return bool(words(text) & _COLUMN_WORDS) or isinstance(iterable, cst.Name) and bool(
        words(iterable.value) & {"df", "data", "dataset", "table", "frame", "train", "records"})


class _Store:
    def __init__(self, node: cst.CSTNode, table: str) -> None:
        self.node, self.table = node, table


def _stores(module: cst.Module) -> list[_Store]:
    """Tables keyed by column and filled with that column's observed values."""
    out: list[_Store] = []
    for loop in walk(module):
        if isinstance(loop, cst.For) and _columns_loop(loop.iter):
            loop_vars = target_names(loop.target)
            derived: set[str] = set()
            for stmt in walk(loop.body, into_scopes=False):
                if not isinstance(stmt, cst.Assign):
                    continue
                direct = _value_set(stmt.value, loop_vars)
                # one hop only: ``levels = sorted(df[c].unique())`` then ``table[c] = levels``
                if not direct and not any(isinstance(n, cst.Name) and n.value in derived for n in walk(stmt.value)):
                    continue
                for t in stmt.targets:
                    target = t.target
                    if direct and isinstance(target, cst.Tuple) and len(target.elements) == 2 \
                            and _factorized(stmt.value) and isinstance(target.elements[1].value, cst.Name):
                        # ``codes, uniques = pd.factorize(df[c])``: the second item is the codebook
                        derived.add(target.elements[1].value.value)
                        continue
                    if isinstance(target, cst.Name):
                        if direct:
                            derived.add(target.value)
                    elif isinstance(target, cst.Subscript) and len(target.slice) == 1 \
                            and isinstance(target.slice[0].slice, cst.Index) \
                            and isinstance(target.slice[0].slice.value, cst.Name) \
                            and target.slice[0].slice.value.value in loop_vars:
                        table = dotted(target.value) or ""
                        column = _column_of(stmt.value, loop_vars)
                        if table and not (column is not None and dotted(column.value) == table):
                            out.append(_Store(stmt, table))
        elif isinstance(loop, COMPREHENSIONS):
            loop_vars: set[str] = set()
            columns = False
            for comp in _generators(loop):
                loop_vars |= target_names(comp.target)
                columns = columns or _columns_loop(comp.iter)
            if not columns:
                continue
            key, value = _pair(loop)
            if isinstance(key, cst.Name) and key.value in loop_vars and value is not None \
                    and _value_set(value, loop_vars):
                out.append(_Store(loop, ""))
    return out


def _generators(comp: cst.CSTNode) -> list[cst.CompFor]:
    found: list[cst.CompFor] = []
    node = getattr(comp, "for_in", None)
    while isinstance(node, cst.CompFor):
        found.append(node)
        node = node.inner_for_in
    return found


def _pair(comp: cst.CSTNode) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
    if isinstance(comp, cst.DictComp):
        return comp.key, comp.value
    elt = getattr(comp, "elt", None)
    if isinstance(elt, cst.Tuple) and len(elt.elements) == 2:
        return elt.elements[0].value, elt.elements[1].value
    return None, None


def _bound(module: cst.Module, comp: cst.CSTNode) -> tuple[str, cst.CSTNode]:
    """The name a comprehension's table is assigned to (``self.codes = OrderedDict(... for var in data)``)
    and that assignment."""
    for stmt in walk(module):
        if isinstance(stmt, cst.Assign) and any(n is comp for n in walk(stmt.value)):
            names = [dotted(t.target) or "" for t in stmt.targets]
            return next((n for n in names if n), ""), stmt
    return "", comp


def _mentions(node: cst.CSTNode, name: str) -> bool:
    for n in walk(node):
        if isinstance(n, cst.Name) and n.value == name or isinstance(n, cst.Attribute) and n.attr.value == name:
            return True
        if isinstance(n, cst.SimpleString) and string_text(n) == name:
            return True
    return False


def _decoders(module: cst.Module) -> list[cst.CSTNode]:
    """Functions named for decoding and ``inverse_transform`` calls: where generated codes become values."""
    found: list[cst.CSTNode] = []
    for node in walk(module):
        if isinstance(node, cst.FunctionDef):
            pieces = words(node.name.value)
            if pieces & _DECODE_WORDS or {"from", "onehot"} <= pieces or {"to", "original"} <= pieces:
                found.append(node)
        elif isinstance(node, cst.Call) and call_name(node) in ("inverse_transform", "decode", "fit_invert"):
            found.append(node)
        elif isinstance(node, cst.ClassDef) and not node.bases:
            # a plain data-handler class with ``forward`` (encode) and ``backward`` (decode) methods; a
            # class with bases may be an autograd function or a network, whose ``backward`` is a gradient
            methods = {m.name.value: m for m in node.body.body if isinstance(m, cst.FunctionDef)}
            if "forward" in methods and "backward" in methods:
                found.append(methods["backward"])
    return found


class PrivateCategoryCodebook(Rule):
    id = "DP208"
    name = "private-category-codebook"
    category = "metadata"
    severity = "error"
    summary = "each column's categories are read from the private table and decode the DP output"
    rationale = (
        "A DP generator (GAN, PrivBayes, marginal-based synthesizer) emits codes — one-hot slots, "
        "ordinal indices, marginal cells — that are turned back into values with a per-column codebook. "
        "When that codebook is built from the private table itself (`{c: np.unique(df[c]) for c in df}`, "
        "`levels[c] = sorted(df[c].unique())`, `encoders[col] = LabelEncoder().fit(df[col])`) and later "
        "decodes the output (`inverse_transform`, a `decode`/`from_onehot` function reading it), every "
        "category present in the data, including one held by a single person, is published verbatim, and "
        "the number of slots reveals the number of distinct values — no noise covers this. Not reported: "
        "codebooks built from a public, synthetic, reference or test frame, or from a declared domain or "
        "schema; tables only used for evaluation; a codebook never read where codes are decoded; code with "
        "no DP words in its text or its folder names. Fix: take the categories from a public schema or "
        "domain file, or release them through a DP mechanism (e.g. noisy counts with a threshold) charged "
        "to the budget."
    )
    TRIGGERS = ("unique", "set(", "value_counts", "Encoder", "categories", "get_dummies", "classes_", "factorize")
    requires_dp_context = False

    @classmethod
    def applies_to(cls, source: str) -> bool:
        if not super().applies_to(source):
            return False
        code = code_and_fstrings(source)
        return re.search(r"inverse_transform|decode|decompress|fit_invert|onehot|inverse|reconstruct|domain|backward|"
                         r"train|fit|synthe|generat|privbayes|gan|mst|aim|pgm|mechanism", code, re.I) is not None

    VALID = (
        # the categories come from a public schema, not from the data
        """
import numpy as np
class Table:
    def __init__(self, data, schema, epsilon):
        self.codes = {var: np.asarray(schema[var]) for var in data}
    def from_onehot(self, onehot):
        return [self.codes[v][i] for v, i in onehot]
""",
        # the codebook is only used to encode training inputs (never reads generated codes)
        """
from sklearn.preprocessing import LabelEncoder
def prepare(df, categorical_columns, epsilon):
    encoders = {}
    for col in categorical_columns:
        encoders[col] = LabelEncoder().fit(df[col])
        df[col] = encoders[col].transform(df[col])
    return df
""",
        # categories of the synthetic output, for an evaluation against it
        """
def decode_report(synthetic_df, categorical_cols, epsilon):
    levels = {}
    for c in categorical_cols:
        levels[c] = sorted(synthetic_df[c].unique())
    return levels
def inverse(codes, levels):
    return [levels[c][i] for c, i in codes]
""",
        # a utility metric comparing category sets: evaluation, not the release
        """
import numpy as np
def evaluate_coverage(train_df, synth_df, columns, epsilon):
    seen = {c: set(train_df[c]) for c in columns}
    return {c: len(set(synth_df[c]) & seen[c]) / len(seen[c]) for c in columns}
def decode(x):
    return x
""",
        # a marginal-error metric infers a domain from the real table to compare it with the synthetic one
        """
from mbi import Domain
def marginal_error(original_df, synth_df, epsilon):
    sizes = {col: original_df[col].nunique() for col in original_df.columns}
    domain = Domain(sizes.keys(), sizes.values())
    return tvd(original_df, synth_df, domain)
""",
        # the domain sizes come from a public domain file
        """
import json
from mbi import Dataset, Domain
def fit_mst(df, domain_path, epsilon, delta):
    sizes = json.load(open(domain_path))
    domain = Domain.fromdict({c: sizes[c] for c in df.columns})
    return mst(Dataset(df, domain), epsilon, delta)
""",
        # a benchmark helper sizes the domain of a table it has just drawn at random
        """
import numpy as np
import pandas as pd
def make_synthetic_table(n_rows, cat_cols, epsilon):
    df = pd.DataFrame(np.random.randint(0, 5, size=(n_rows, len(cat_cols))), columns=cat_cols)
    domain = {}
    for c in cat_cols:
        domain[c] = {"type": "categorical", "size": int(df[c].nunique())}
    return df, domain
def run(synthesizer, epsilon):
    df, domain = make_synthetic_table(50, ["a", "b"], epsilon)
    return synthesizer.fit(df, domain)
""",
        # no DP anywhere in the file or its folders
        """
import numpy as np
class Codec:
    def __init__(self, data):
        self.codes = {var: np.unique(data[var]) for var in data}
    def decode(self, idx):
        return {v: self.codes[v][i] for v, i in idx.items()}
""",
        # the same handler with the levels of a public schema
        """
import pandas as pd
class TableCoder:
    def __init__(self, df, schema, epsilon):
        self.df, self.schema, self.lookup = df, schema, {}
    def forward(self):
        coded = pd.DataFrame()
        for col in self.df.columns:
            levels = pd.Index(self.schema[col])
            coded[col] = levels.get_indexer(self.df[col])
            self.lookup[col] = levels
        return coded
    def backward(self, coded):
        return pd.DataFrame({col: self.lookup[col][coded[col]] for col in coded.columns})
""",
        # an autograd function's backward is a gradient, and the factorized codes only index a DP-SGD batch
        """
import pandas as pd
import torch
class ClipGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x
    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-1.0, 1.0)
def encode(df, columns, noise_multiplier):
    codes = {}
    for col in columns:
        codes[col], _ = pd.factorize(df[col])
    return codes
""",
    )

    INVALID = (
        # a DP-WGAN's dataset class: codes of every column are the observed values
        """
import collections
import numpy as np
class CategoricalDataset:
    def __init__(self, data, dp_epsilon):
        self.codes = collections.OrderedDict(  # <-
            (var, np.unique(data[var])) for var in data
        )
    def from_onehot(self, onehot):
        return {var: self.codes[var][onehot[var].argmax()] for var in self.codes}
""",
        # levels kept in the metadata, later used to rebuild the synthetic table
        """
def preprocess(train_df, cat_cols, epsilon):
    cat_levels = {}
    for c in cat_cols:
        levels = sorted(train_df[c].astype(str).unique().tolist())
        cat_levels[c] = levels  # <-
    return {"cat_levels": cat_levels}
def reconstruct_from_synthetic(x, metadata):
    out = {}
    for c, levels in metadata["cat_levels"].items():
        out[c] = [levels[i] for i in x[c]]
    return out
""",
        # a label encoder per column, inverted on the sampled codes
        """
from sklearn.preprocessing import LabelEncoder
class Compressor:
    def compress(self, df, private_epsilon):
        encoders = {}
        for col in df.columns:
            encoders[col] = LabelEncoder().fit(df[col])  # <-
            df[col] = encoders[col].transform(df[col])
        return df, {"encoders": encoders}
    def decompress(self, df, context):
        for col in context["encoders"]:
            df[col] = context["encoders"][col].inverse_transform(df[col])
        return df
""",
        # a domain mapping filled from the data when no public one is given
        """
class Preprocessor:
    def __init__(self, config, epsilon):
        self.mapping_cat_domain = config.mapping_cat_domain
    def fit(self, df, attr_cat):
        for attr in attr_cat:
            if attr not in self.mapping_cat_domain:
                self.mapping_cat_domain[attr] = df[attr].unique().tolist()  # <-
    def inverse_transform(self, codes):
        return {a: [self.mapping_cat_domain[a][i] for i in codes[a]] for a in codes}
""",
        # domain sizes counted on the private (train + test) table, handed to the DP synthesizer
        """
def run(train, test, model, categorical, epsilon):
    combined = train.append(test)
    config = {}
    for col in combined.columns:
        col_count = len(combined[col].unique())
        config[col] = col_count  # <-
    model.train(train, config)
""",
        # a marginal model's domain from the distinct values, inline
        """
from mbi import Dataset, Domain
def fit_mst(df, epsilon, delta):
    domain = Domain.fromdict({c: int(df[c].nunique()) for c in df.columns})  # <-
    return mst(Dataset(df, domain), epsilon, delta)
""",
        # a data handler factorizes each private column and its backward pass decodes the synthetic codes
        """
import pandas as pd
class TableCoder:
    def __init__(self, df, epsilon):
        self.df, self.lookup = df, {}
    def forward(self):
        coded = pd.DataFrame()
        for col in self.df.columns:
            coded[col], levels = pd.factorize(self.df[col])
            self.lookup[col] = levels  # <-
        return coded
    def backward(self, coded):
        return pd.DataFrame({col: self.lookup[col][coded[col]] for col in coded.columns})
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        if not _DP_TEXT.search(code_and_fstrings(self.ctx.source)) and not (
                _dp_path(self.ctx.path) and not _unused_by_dp(self.ctx.path, self.ctx.source)):
            return
        decoders = _decoders(node)
        consumers = _consumers(node)
        if not decoders and not consumers:
            return
        for store in _stores(node):
            table, site = (store.table, store.node) if store.table else _bound(node, store.node)
            if not table:
                continue
            key = table.split(".")[-1]
            if words(key) & _NOT_PRIVATE - {"meta", "metadata", "domain", "config", "cfg"}:
                continue
            if self._in_evaluation(site):
                continue
            decoded = any(_mentions(d, key) for d in decoders if not _contains(d, store.node))
            consumed = any(isinstance(a, cst.Name) and a.value == key or isinstance(a, cst.Attribute)
                           and a.attr.value == key or _contains(a, store.node) for a in consumers)
            if not decoded and not consumed:
                continue
            use = "decoding the DP output reads it" if decoded else "the DP generator or its domain is built from it"
            self.report(site, f"`{key}` holds each column's observed values (or how many there are) read from the "
                              f"private table, and {use}: a category present in the data, even one person's, "
                              f"shapes the release and the domain size reveals how many distinct values there "
                              f"are; take the categories from a public schema or release them with DP")

    def _in_evaluation(self, node: cst.CSTNode) -> bool:
        fn = self.ctx.analysis.enclosing_function(node)
        if fn is None:
            return False
        # a function given the synthetic output beside the real table compares them
        params = {p.name.value for p in (*fn.params.params, *fn.params.kwonly_params, *fn.params.posonly_params)}
        name = words(fn.name.value)
        made_up = bool(name & {"dummy", "toy", "mock", "fake"}) or {"make", "synthetic"} <= name
        return made_up or bool(name & _EVAL_WORDS) or any(
            words(p) & {"synth", "synthetic", "syn", "fake", "generated"} for p in params)


#: words of a call that builds the DP model's domain or trains / runs the DP generator on a table
_CONSUMER_WORDS = frozenset({
    "domain", "train", "fit", "synthesize", "synthesise", "synthesizer", "synthesiser", "generate",
    "generator", "privbayes", "pgm", "mst", "aim", "gan", "mechanism",
})


def _consumers(module: cst.Module) -> list[cst.CSTNode]:
    """Arguments of calls that build a domain or run a generator (``Domain(sizes)``, ``model.train(df, config)``)."""
    found: list[cst.CSTNode] = []
    for node in walk(module):
        if isinstance(node, cst.Call) and words(dotted(node.func) or call_name(node)) & _CONSUMER_WORDS:
            found.extend(arg.value for arg in node.args)
        elif isinstance(node, cst.Call):
            found.extend(arg.value for arg in node.args
                         if arg.keyword is not None and words(arg.keyword.value) & {"domain", "domains"})
    return found


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return any(n is inner for n in walk(outer))
