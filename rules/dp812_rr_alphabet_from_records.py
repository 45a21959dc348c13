"""DP812: a randomized-response step replaces a record's value by a random pick from the values the private
column holds."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as call_name_ast
from dpcheck.analysis.syntax import call_name, dotted, target_names, walk, words
from dpcheck.rule import Rule

#: uniform draws a keep-or-replace test compares with a probability
_UNIFORM = frozenset({"random", "rand", "uniform", "random_sample", "ranf", "sample"})
#: picks of a replacement value from a set
_PICKS = frozenset({"choice", "choices"})
#: calls whose result is (a container of) the values their argument holds
_SETS = frozenset({"unique", "set", "drop_duplicates"})
_CARRY = frozenset({"list", "tuple", "sorted", "array", "asarray", "tolist", "to_list", "to_numpy", "dropna"})
#: the prediction target or a class list: flipping labels among the known classes is label noise, not a release
_LABEL_WORDS = frozenset({"label", "labels", "y", "target", "targets", "cls", "class", "classes", "lbl", "tag",
                          "tags", "token", "tokens", "vocab", "word", "words"})
#: functions that corrupt training data on purpose (robustness experiments, augmentation)
_NOT_RELEASE_WORDS = frozenset({"label", "labels", "augment", "augmentation", "corrupt", "corruption", "flip",
                                "poison", "attack", "shuffle", "bootstrap", "mutate", "mutation", "crossover"})


def _root(expr: cst.BaseExpression) -> str | None:
    """The name the values are read from: ``x`` of ``x.values``, ``df['age']``, ``df.iloc[:, i]``."""
    node = expr
    for _ in range(10):
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Attribute):
            if node.attr.value in ("values", "iloc", "loc", "str", "cat"):
                node = node.value
            else:
                return dotted(node) or None
        elif isinstance(node, cst.Name):
            return node.value
        else:
            return None
    return None


def value_set(expr: cst.BaseExpression) -> str | None:
    """The data read when ``expr`` is the set of values it holds: ``np.unique(x)``, ``x.unique()``,
    ``set(x)``, ``x.value_counts().index(.values)``, through ``list``/``sorted``/``.tolist()``."""
    node = expr
    for _ in range(8):
        if isinstance(node, cst.Attribute) and node.attr.value in ("values", "index", "keys"):
            inner = node.value
            if node.attr.value == "index" and isinstance(inner, cst.Call) and call_name(inner) == "value_counts" \
                    and isinstance(inner.func, cst.Attribute):
                return _root(inner.func.value)
            node = inner
            continue
        if not isinstance(node, cst.Call):
            return None
        name = call_name(node)
        method = isinstance(node.func, cst.Attribute) and not (
            isinstance(node.func.value, cst.Name) and node.func.value.value in ("np", "numpy", "pd", "pandas"))
        if name in _CARRY:
            if method and name not in ("list", "tuple", "sorted"):
                node = node.func.value  # type: ignore[union-attr]
            elif node.args:
                node = node.args[0].value
            else:
                return None
            continue
        if name == "keys" and method and isinstance(node.func.value, cst.Call) \
                and call_name(node.func.value) in ("Counter", "value_counts"):  # type: ignore[union-attr]
            node = node.func.value  # type: ignore[union-attr]
            continue
        if name in _SETS or name == "Counter":
            if method and name != "set":
                return _root(node.func.value)  # type: ignore[union-attr]
            if not method and node.args and not isinstance(
                    node.args[0].value, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.List, cst.Tuple,
                                         cst.SimpleString, cst.Integer)):
                return _root(node.args[0].value)
        return None
    return None


def _uniform_test(test: cst.BaseExpression) -> bool:
    """``random.random() < q``, ``np.random.rand() > p``, ``rng.uniform() <= keep``: a keep-or-replace coin."""
    return isinstance(test, cst.Comparison) and any(
        isinstance(c, cst.Call) and call_name(c) in _UNIFORM and not c.args for c in walk(test))


class RandomizedResponseAlphabetFromRecords(Rule):
    id = "DP812"
    name = "rr-alphabet-from-records"
    category = "metadata"
    severity = "error"
    summary = ("a randomized-response step keeps each value with probability q and otherwise replaces it by a "
               "random pick from the values present in the private column")
    rationale = (
        "Randomized response (k-RR, generalised RR, a PWS-Cup-style `rr(x, q)`) is ε-LDP only over a fixed, "
        "public alphabet: the replacement is drawn uniformly from every value the attribute can take. When the "
        "alphabet is read from the records themselves (`np.unique(col)`, `col.unique()`, `set(col)`, "
        "`col.value_counts().index`), a value only one record holds is in the output domain, and can appear "
        "in the released column, only if that record is in the data; its presence is disclosed with no noise, "
        "and the k in the ε-to-q relation changes with the data. Reported: in one function, a name bound to the "
        "value set of the data (or the value set inline) that a `choice` picks from in the branch of a "
        "keep-or-replace coin (`v if random.random() < q else random.choice(values)`). Not reported: the "
        "prediction target's classes (label noise for robustness), functions that augment, corrupt, flip or "
        "attack, alphabets passed in or declared. Fix: take the domain as public input (a schema, the "
        "codebook of the attribute) or estimate it with a DP mechanism charged to the budget."
    )
    TRIGGERS = ("choice",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``choice`` call, a uniform draw with no arguments compared with something, and a
        value-set read (``unique``, ``set``, ``value_counts``, ``drop_duplicates``, ``Counter``)."""
        calls = facts.nodes(ast.Call)
        if not any(call_name_ast(c) in _PICKS for c in calls):
            return False
        if not any(call_name_ast(c) in _SETS | {"value_counts", "Counter"} for c in calls):
            return False
        return any(any(isinstance(s, ast.Call) and call_name_ast(s) in _UNIFORM and not s.args  # type: ignore[attr-defined]
                       for s in ast.walk(c)) for c in facts.nodes(ast.Compare))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if words(node.name.value) & _NOT_RELEASE_WORDS:
            return
        held: dict[str, tuple[cst.CSTNode, str]] = {}
        body = list(walk(node.body, into_scopes=False))
        for sub in body:
            if isinstance(sub, cst.Assign):
                data = value_set(sub.value)
                for t in sub.targets:
                    for name in target_names(t.target):
                        if data is not None:
                            held[name] = (sub, data)
                        else:
                            held.pop(name, None)
        seen: set[int] = set()
        for sub in walk(node.body):
            if isinstance(sub, cst.IfExp):
                test, branches = sub.test, (sub.body, sub.orelse)
            elif isinstance(sub, cst.If):
                test, branches = sub.test, (sub.body, sub.orelse or cst.SimpleStatementLine([]))
            else:
                continue
            if not _uniform_test(test):
                continue
            for branch in branches:
                for pick in walk(branch):
                    if not (isinstance(pick, cst.Call) and call_name(pick) in _PICKS and pick.args):
                        continue
                    arg = pick.args[0].value
                    site: cst.CSTNode | None = None
                    data = value_set(arg)
                    if data is not None:
                        site = pick
                    elif isinstance(arg, cst.Name) and arg.value in held:
                        site, data = held[arg.value]
                    if site is None or data is None or id(site) in seen:
                        continue
                    if words(data.split(".")[-1]) & _LABEL_WORDS:
                        continue
                    seen.add(id(site))
                    self.report(site, f"the replacement alphabet of this randomized response is the set of values "
                                      f"`{data}` holds: a value one record alone holds can be output only when that "
                                      "record is present, outside any ε; draw replacements from the attribute's "
                                      "public domain instead")

    VALID = (
        # twin of the PWS-style RR: the alphabet is the attribute's declared domain
        """
import random
AGE_BANDS = ["0-17", "18-34", "35-54", "55+"]
def rr(column, q, domain=AGE_BANDS):
    return [v if random.random() < q else random.choice(domain) for v in column]
""",
        # twin: k-RR over a schema handed in
        """
import numpy as np
def krr_column(df, col, schema, epsilon):
    k = len(schema[col])
    keep = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    out = []
    for v in df[col]:
        out.append(v if np.random.rand() < keep else np.random.choice(schema[col]))
    return out
""",
        # twin of the statement form: the cities come from the public gazetteer
        """
import numpy as np
def randomise_city(df, keep_prob, gazetteer):
    cities = gazetteer.names
    out = df.copy()
    for i in range(len(out)):
        if np.random.uniform() > keep_prob:
            out.loc[i, "city"] = np.random.choice(cities)
    return out
""",
        # ordinary ML: symmetric label noise among the known classes for a robustness experiment
        """
import random
import numpy as np
def add_label_noise(y, rate):
    classes = np.unique(y)
    return [c if random.random() > rate else random.choice(classes) for c in y]
""",
        # ordinary ML: genetic-algorithm mutation picks a gene from the observed genes
        """
import random
def mutate(genome, rate):
    pool = list(set(genome))
    return [g if random.random() > rate else random.choice(pool) for g in genome]
""",
    )

    INVALID = (
        # a PWS-Cup-style column randomiser whose replacement values are those present in the column
        """
import random
def rr(x, q):
    uniq = x.value_counts().index.values  # <-
    return [v if random.random() < q else random.choice(uniq) for v in x]
""",
        # k-RR with the alphabet read from the records, inline in the draw
        """
import numpy as np
def krr_column(df, col, epsilon):
    k = df[col].nunique()
    keep = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    out = []
    for v in df[col]:
        if np.random.rand() < keep:
            out.append(v)
        else:
            out.append(np.random.choice(df[col].unique()))  # <-
    return out
""",
        # generalised RR over a set of the observed answers
        """
import random
def perturb_answers(answers, p_keep):
    alphabet = sorted(set(answers))  # <-
    noisy = []
    for a in answers:
        noisy.append(a if random.random() < p_keep else random.choice(alphabet))
    return noisy
""",
        # statement form: each record's city kept or swapped for one of the cities in the table
        """
import numpy as np
def randomise_city(df, keep_prob):
    cities = df["city"].drop_duplicates().tolist()  # <-
    out = df.copy()
    for i in range(len(out)):
        if np.random.uniform() > keep_prob:
            out.loc[i, "city"] = np.random.choice(cities)
    return out
""",
    )
