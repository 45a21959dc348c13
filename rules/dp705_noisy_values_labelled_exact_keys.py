"""DP705: noisy grouped values are labelled with the exact result's index (the group keys present in the
private data)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import base_name, call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words of a name that holds the released (noised) values
_RELEASE = frozenset({"noisy", "noised", "dp", "private", "priv", "released", "sanitized", "sanitised", "perturbed",
                      "privatized", "privatised"})
#: attributes / methods that give the keys of a grouped result
_KEYS = frozenset({"index", "keys"})
_FRAMES = frozenset({"Series", "DataFrame"})


def _keys_of(expr: cst.BaseExpression) -> str | None:
    """``exact.index``, ``exact.keys()``, ``list(exact.index)`` -> ``exact``."""
    if isinstance(expr, cst.Call) and call_name(expr) in {"list", "tuple", "array", "asarray", "to_list"} \
            and expr.args:
        return _keys_of(expr.args[0].value)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in {
            "keys", "tolist", "to_list", "to_numpy"}:
        if expr.func.attr.value == "keys":
            return dotted(expr.func.value)
        return _keys_of(expr.func.value)
    if isinstance(expr, cst.Attribute) and expr.attr.value == "index":
        return dotted(expr.value)
    return None


class NoisyValuesLabelledExactKeys(Rule):
    id = "DP705"
    name = "noisy-values-labelled-exact-keys"
    category = "general"
    severity = "error"
    summary = ("noisy grouped values are labelled with the exact result's keys (`noisy[by] = exact.index`): "
               "the released groups are the keys present in the private data")
    rationale = (
        "A grouped DP query (sum or count by postal code, by day) is ε-DP only over a public key set: every key "
        "of the domain is released, empty ones with noise too, or keys are selected with a DP threshold. Taking "
        "the labels of the noisy values from the exact grouped result (`exact.index`, `exact.keys()`) releases "
        "exactly the keys that occur in the private data: adding one record with a new key adds a row to the "
        "output with certainty. Reported: an assignment to a noisy-named value (`noisy[...] = exact.index`, "
        "`noisy.index = exact.index`) or a `pd.Series`/`pd.DataFrame` whose `index=` is the keys of a value "
        "that the same function passed into the noise (the noised array was computed from it). Fix: reindex the "
        "exact result on the public key set before adding noise, or select keys with a DP threshold."
    )
    TRIGGERS = (".index", ".keys(")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """An ``.index``/``.keys`` read and an identifier with a release word."""
        return any(a.attr in _KEYS for a in facts.nodes(ast.Attribute)) and any(  # type: ignore[attr-defined]
            words(i) & _RELEASE for i in facts.identifiers)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body, into_scopes=False))
        # names whose value was computed from which names (one hop, plus chains through release names)
        sources: dict[str, set[str]] = {}
        for sub in body:
            if isinstance(sub, cst.Assign):
                read = {n.value for n in walk(sub.value) if isinstance(n, cst.Name)}
                for t in sub.targets:
                    r = base_name(t.target)
                    if r is not None:
                        sources.setdefault(r, set()).update(read)

        def derived(name: str, origin: str, seen: set[str] | None = None) -> bool:
            seen = seen or set()
            if name in seen:
                return False
            seen.add(name)
            direct = sources.get(name, set())
            return origin in direct or any(derived(d, origin, seen) for d in direct if d != name)

        for sub in body:
            if isinstance(sub, cst.Assign):
                origin = _keys_of(sub.value)
                if origin is None:
                    continue
                for t in sub.targets:
                    r = base_name(t.target)
                    if r and words(r) & _RELEASE and r != origin and derived(r, origin.split(".")[0]):
                        self.report(sub, self._message(r, origin))
            elif isinstance(sub, cst.Call) and call_name(sub) in _FRAMES:
                index = next((a.value for a in sub.args if a.keyword is not None and a.keyword.value == "index"),
                             None)
                origin = _keys_of(index) if index is not None else None
                data = next((a.value for a in sub.args if a.keyword is None), None)
                if origin is None or data is None:
                    continue
                names = {n.value for n in walk(data) if isinstance(n, cst.Name)}
                root = origin.split(".")[0]
                if any(words(n) & _RELEASE and n != root and derived(n, root) for n in names):
                    self.report(sub, self._message(next(n for n in sorted(names) if words(n) & _RELEASE), origin))

    @staticmethod
    def _message(noisy: str, origin: str) -> str:
        return (f"the noisy values `{noisy}` are labelled with the keys of the exact result `{origin}`: the "
                "released groups are those present in the private data, outside ε; reindex on a public key set "
                "before the noise (or select keys with a DP threshold)")

    VALID = (
        # twin: the exact sums are reindexed on the public keys before the noise
        """
import numpy as np
import pandas as pd
def private_sum_by(df, column, by, public_keys, scale):
    exact = df.groupby(by)[column].sum().reindex(public_keys, fill_value=0)
    noisy = exact.to_numpy() + np.random.laplace(0, scale, len(public_keys))
    return pd.Series(noisy, index=public_keys)
""",
        # twin: labels from the public key list
        """
import numpy as np
def private_counts(df, by, keys, scale):
    exact = df[by].value_counts().reindex(keys, fill_value=0)
    noisy_counts = exact.to_frame(name="n")
    noisy_counts["n"] = exact.to_numpy() + np.random.laplace(0, scale, len(keys))
    noisy_counts[by] = keys
    return noisy_counts
""",
        # the exact index labels the exact values (a non-private reference)
        """
import pandas as pd
def exact_sum_by(df, column, by):
    exact = df.groupby(by)[column].sum()
    return pd.Series(exact.to_numpy(), index=exact.index)
""",
        # ordinary pandas: a plot's labels from its own counts
        """
import pandas as pd
def bar(df, ax):
    counts = df["city"].value_counts()
    ax.bar(list(counts.index), counts.to_numpy())
""",
    )

    INVALID = (
        # noisy sums labelled with the exact group keys
        """
import numpy as np
import pandas as pd
def private_sum_by(df, column, by, scale):
    exact = df.groupby(by)[column].sum()
    noisy_sum = pd.Series(np.maximum(exact.to_numpy() + np.random.laplace(0, scale, len(exact)), 0))
    noisy_sum = noisy_sum.to_frame(name=column)
    noisy_sum[by] = exact.index  # <-
    return noisy_sum
""",
        # a Series built with the exact index
        """
import numpy as np
import pandas as pd
def dp_counts(df, by, epsilon):
    true_counts = df[by].value_counts()
    noisy = true_counts.to_numpy() + np.random.laplace(0, 1 / epsilon, len(true_counts))
    return pd.Series(noisy, index=true_counts.index)  # <-
""",
        # dict keys of the exact histogram
        """
import numpy as np
def dp_hist(records, epsilon):
    exact = {}
    for r in records:
        exact[r] = exact.get(r, 0) + 1
    noisy_values = np.array(list(exact.values())) + np.random.laplace(0, 1 / epsilon, len(exact))
    noisy_keys = list(exact.keys())  # <-
    return dict(zip(noisy_keys, noisy_values))
""",
        # the index set on the noisy frame afterwards
        """
import numpy as np
import pandas as pd
def dp_means(df, by, column, scale):
    exact = df.groupby(by)[column].mean()
    released = pd.DataFrame({"mean": exact.to_numpy() + np.random.laplace(0, scale, len(exact))})
    released.index = exact.index  # <-
    return released
""",
    )
