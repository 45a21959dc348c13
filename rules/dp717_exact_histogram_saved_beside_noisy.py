"""DP717: a record (dict, history entry) keeps the exact counts / histogram under a ``raw_``/``true_`` key next to
the noisy counts released from them."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import dotted, walk, words
from dpcheck.rule import Rule

_EXACT = frozenset({"raw", "true", "exact", "clean", "actual", "real", "unnoised", "noiseless", "original",
                    "nonprivate", "nonnoisy", "plain", "orig", "gt"})
_COUNTS = frozenset({"counts", "count", "hist", "histogram", "histograms", "freq", "freqs", "frequency",
                     "frequencies", "marginal", "marginals", "cells", "tallies", "tally", "prs"})
_NOISY = frozenset({"noisy", "noised", "dp", "private", "privatized", "privatised", "perturbed", "sanitized",
                    "released", "laplace", "gaussian"})


_MODULE = cst.Module(body=[])


def _key_words(key: str) -> frozenset[str]:
    return words(key.replace("-", "_").replace(" ", "_"))


def _string_key(node: cst.BaseExpression) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


class ExactHistogramSavedBesideNoisy(Rule):
    id = "DP717"
    name = "exact-histogram-saved-beside-noisy"
    category = "general"
    severity = "error"
    summary = ("the exact counts / histogram are stored under a `raw_`/`true_` key in the same record as the "
               "noisy counts released from them")
    rationale = (
        "Noise protects the counts only if the exact ones stay inside the mechanism. A history entry, result "
        "dict or log record that keeps `raw_counts` (or `true_hist`, `exact_frequencies`) next to "
        "`noisy_counts` carries the unprotected histogram wherever the record goes: saved with the results, "
        "pickled with the model, returned to the caller. Every bin is exact and no ε covers it. Reported: in "
        "one function, a container that gets a string key naming exact counts (words raw/true/exact/clean/"
        "actual with counts/hist/freq/marginal) and a key naming noisy counts (noisy/dp/private with a count "
        "word), by subscript assignment or in one dict literal / `dict(...)` call. Fix: keep the exact counts "
        "local (or drop the key before saving); store only the noisy ones."
    )
    TRIGGERS = ("raw", "true", "exact", "clean", "actual", "real", "orig", "gt")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """Needs a string constant naming exact counts and one naming noisy counts (or such keywords)."""
        keys: set[str] = set()
        for node in facts.nodes(ast.Constant):
            if isinstance(node.value, str) and len(node.value) < 60:  # type: ignore[attr-defined]
                keys.add(node.value)  # type: ignore[attr-defined]
        for node in facts.nodes(ast.keyword):
            if node.arg:  # type: ignore[attr-defined]
                keys.add(node.arg)  # type: ignore[attr-defined]
        exact = noisy = False
        for key in keys:
            w = _key_words(key)
            if w & _COUNTS:
                exact = exact or bool(w & _EXACT)
                noisy = noisy or bool(w & _NOISY)
        return exact and noisy

    def _check(self, entries: list[tuple[str, cst.CSTNode]]) -> None:
        exact = [(k, n) for k, n in entries if _key_words(k) & _COUNTS and _key_words(k) & _EXACT
                 and not _key_words(k) & _NOISY]
        noisy = [k for k, _ in entries if _key_words(k) & _COUNTS and _key_words(k) & _NOISY]
        if not exact or not noisy:
            return
        # name the noisy key that shares the exact key's count word (``noisy_counts`` beside ``raw_counts``)
        noisy.sort(key=lambda k: not (_key_words(k) & _key_words(exact[0][0]) & _COUNTS))
        done = self.__dict__.setdefault("_done", set())
        for key, node in exact:
            if id(node) in done:
                continue
            done.add(id(node))
            self.report(
                node,
                f"the exact counts are kept under '{key}' next to the noisy ones ('{noisy[0]}'): wherever this "
                "record is saved or returned, the histogram goes out without noise; keep only the noisy counts",
            )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        by_container: dict[str, list[tuple[str, cst.CSTNode]]] = {}
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    target = t.target
                    if isinstance(target, cst.Subscript) and len(target.slice) == 1 \
                            and isinstance(target.slice[0].slice, cst.Index):
                        key = _string_key(target.slice[0].slice.value)
                        owner = dotted(target.value) or _MODULE.code_for_node(target.value)
                        if key and owner:
                            by_container.setdefault(owner, []).append((key, sub))
            elif isinstance(sub, cst.Dict):
                entries = []
                for el in sub.elements:
                    if isinstance(el, cst.DictElement) and (key := _string_key(el.key)):
                        entries.append((key, el))
                self._check(entries)
            elif isinstance(sub, cst.Call) and dotted(sub.func) == "dict":
                self._check([(a.keyword.value, a) for a in sub.args if a.keyword is not None])
        for entries in by_container.values():
            self._check(entries)

    VALID = (
        # twin: only the noisy counts go into the history entry
        """
import numpy as np
def record_epoch(history, counts, epsilon_hist):
    noisy = counts + np.random.laplace(0, 1 / epsilon_hist, counts.shape)
    entry = {}
    entry["bin_edges"] = list(range(len(counts) + 1))
    entry["noisy_counts"] = noisy.tolist()
    history.append(entry)
    return noisy
""",
        # twin: a dict literal with the noisy histogram only
        """
import numpy as np
def release(hist, eps):
    noisy = hist + np.random.laplace(0, 1 / eps, hist.shape)
    return {"noisy_hist": noisy, "epsilon": eps}
""",
        # the exact total is public metadata (no count word), the counts are noisy
        """
import numpy as np
def summary(hist, eps, n_bins):
    return dict(noisy_counts=hist + np.random.laplace(0, 1 / eps, n_bins), raw_bins_requested=n_bins)
""",
        # ordinary ML: label-noise experiment, clean and noisy labels
        """
def label_stats(y_clean, y_noisy):
    out = {}
    out["clean_labels"] = y_clean
    out["noisy_labels"] = y_noisy
    return out
""",
    )

    INVALID = (
        """
import numpy as np
def record_epoch(history, counts, epsilon_hist):
    noisy = counts + np.random.laplace(0, 1 / epsilon_hist, counts.shape)
    entry = {}
    entry["raw_counts"] = counts.tolist()  # <-
    entry["noisy_counts"] = noisy.tolist()
    history.append(entry)
    return noisy
""",
        """
import numpy as np
def release(hist, eps):
    noisy = hist + np.random.laplace(0, 1 / eps, hist.shape)
    return {"noisy_hist": noisy, "true_hist": hist, "epsilon": eps}  # <-
""",
        """
import numpy as np
def summary(hist, eps, n_bins):
    return dict(noisy_counts=hist + np.random.laplace(0, 1 / eps, n_bins), exact_counts=hist)  # <-
""",
        """
import json
import numpy as np
def dump_marginals(path, marginals, epsilon):
    out = {}
    for name, table in marginals.items():
        out[name] = {}
        out[name]["dp_marginal"] = (table + np.random.laplace(0, 2 / epsilon, table.shape)).tolist()
        out[name]["actual_marginal"] = table.tolist()  # <-
    with open(path, "w") as fh:
        json.dump(out, fh)
""",
    )
