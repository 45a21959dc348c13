"""DP750: a noisy histogram released over the keys a helper counted in the private records (the observed categories)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, param_names, walk
from dpcheck.rule import Rule

#: draws and mechanism methods that put noise on a count
_NOISE_CALLS = frozenset({"laplace", "normal", "gauss", "geometric", "discrete_laplace", "discrete_gaussian",
                          "release", "randomise", "randomize", "add_noise", "privatize", "privatise", "perturb",
                          "laplace_mechanism", "gaussian_mechanism", "laplace_noise", "gaussian_noise"})
#: calls that count the values they are given, keyed by value
_COUNTERS = frozenset({"Counter", "value_counts"})


def _counting_helper(fn: cst.FunctionDef) -> bool:
    """``fn`` returns a dict keyed by the values it reads from a parameter: ``d[v] = d.get(v, 0) + 1`` or
    ``d[v] += 1`` in a loop over the parameter, or ``Counter(…)`` / ``…value_counts()`` of it."""
    params = set(param_names(fn)) - {"self", "cls"}
    if not params:
        return False
    returned = {dotted(r.value) for r in walk(fn.body) if isinstance(r, cst.Return) and r.value is not None}
    for node in walk(fn.body):
        if isinstance(node, cst.Return) and isinstance(node.value, cst.Call) and (
                call_name(node.value) in _COUNTERS or any(
                isinstance(c, cst.Call) and call_name(c) in _COUNTERS for c in walk(node.value))):
            if any(isinstance(n, cst.Name) and n.value in params for n in walk(node.value)):
                return True
        if not isinstance(node, cst.For):
            continue
        if not any(isinstance(n, cst.Name) and n.value in params for n in walk(node.iter)):
            continue
        for inner in walk(node.body):
            target = inner.targets[0].target if isinstance(inner, cst.Assign) and len(inner.targets) == 1 \
                else inner.target if isinstance(inner, cst.AugAssign) else None
            if not isinstance(target, cst.Subscript) or dotted(target.value) not in returned:
                continue
            index = target.slice[0].slice if len(target.slice) == 1 else None
            if not isinstance(index, cst.Index) or isinstance(index.value, (cst.Integer, cst.SimpleString)):
                continue
            if isinstance(inner, cst.AugAssign) and isinstance(inner.operator, cst.AddAssign):
                return True
            if isinstance(inner, cst.Assign) and any(
                    isinstance(c, cst.Call) and call_name(c) == "get" for c in walk(inner.value)):
                return True
    return False


def _noisy(expr: cst.CSTNode, noise_names: set[str]) -> bool:
    return any(isinstance(c, cst.Call) and call_name(c) in _NOISE_CALLS or
               isinstance(c, cst.Name) and c.value in noise_names for c in walk(expr))


class NoisyHistogramOverObservedKeys(Rule):
    id = "DP750"
    name = "noisy-histogram-over-observed-keys"
    category = "metadata"
    severity = "error"
    summary = ("a histogram counted in the private records by a helper (keyed by the values it saw) is noised "
               "count by count and released with those keys")
    rationale = (
        "A DP histogram must be released over a domain fixed in advance (the categories given by the analyst or "
        "the schema). When a helper counts the records into a dict keyed by the values it meets "
        "(`counts[v] = counts.get(v, 0) + 1`, `counts[v] += 1`, `Counter(...)`, `value_counts()`) and the caller "
        "adds noise to each count of `counts.items()` and returns the keys with them, the set of keys is an exact "
        "function of the data: a category held by one person appears in the output only when that person is in "
        "the data, whatever the noise, so no ε bounds the release. Reported: the call of such a module helper "
        "whose result is iterated with `.items()` in a dict comprehension or loop that puts noise (a Laplace or "
        "Gaussian draw, a mechanism's `release`/`randomise`) on each value and keeps the key. Not reported: "
        "a histogram read over given bins (`{b: noisy(counts.get(b, 0)) for b in bins}`), counts released "
        "without noise (another rule's business), counts used only inside the function. Fix: iterate a public "
        "domain (the query's bins, the schema's categories), with 0 for the missing ones, or threshold the noisy "
        "counts with a δ-aware cut-off (stability-based histogram)."
    )
    TRIGGERS = (".items()",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a dict comprehension or a loop, an ``items()`` call and a noise call."""
        return "items" in facts.called and bool(facts.called & _NOISE_CALLS) \
            and bool(facts.nodes(ast.DictComp, ast.For))

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_Module(self, node: cst.Module) -> None:
        helpers: set[str] = set()
        for fn in walk(node):
            if isinstance(fn, cst.FunctionDef) and _counting_helper(fn):
                helpers.add(fn.name.value)
        self._helpers = helpers

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not getattr(self, "_helpers", None):
            return
        body = list(walk(node.body, into_scopes=False))
        counted: dict[str, cst.CSTNode] = {}
        noise_names: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                name = sub.targets[0].target.value
                if isinstance(sub.value, cst.Call) and call_name(sub.value) in self._helpers:
                    counted[name] = sub
                elif _noisy(sub.value, set()):
                    noise_names.add(name)
        if not counted:
            return
        reported: set[str] = set()
        for sub in walk(node.body):
            loop = None
            if isinstance(sub, cst.DictComp) and isinstance(sub.for_in.target, cst.Tuple):
                loop, value, key = sub.for_in, sub.value, sub.key
                keys = {n.value for n in walk(key) if isinstance(n, cst.Name)}
                first = sub.for_in.target.elements[0].value
                keeps = isinstance(first, cst.Name) and first.value in keys
            elif isinstance(sub, cst.For) and isinstance(sub.target, cst.Tuple):
                loop, value = sub, sub.body
                first = sub.target.elements[0].value
                keeps = isinstance(first, cst.Name) and any(
                    isinstance(a, cst.Assign) and isinstance(a.targets[0].target, cst.Subscript)
                    and any(isinstance(n, cst.Name) and n.value == first.value for n in walk(a.targets[0].target.slice[0]))
                    and _noisy(a.value, noise_names) for a in walk(sub.body))
            if loop is None or not keeps:
                continue
            it = loop.iter
            if not (isinstance(it, cst.Call) and call_name(it) == "items" and isinstance(it.func, cst.Attribute)):
                continue
            source = dotted(it.func.value)
            if source not in counted or source in reported or not _noisy(value, noise_names):
                continue
            reported.add(source)
            helper = call_name(counted[source].value)  # type: ignore[attr-defined]
            self.report(counted[source], f"`{source}` holds counts keyed by the values `{helper}` met in the "
                                         "private records, and each count is noised and released with its key: "
                                         "the set of keys is exact (a category one person holds appears only "
                                         "with them), so ε does not bound the release; iterate a public domain "
                                         "(the query's bins, the schema's categories) instead")

    VALID = (
        # twin of the helper case: the noisy histogram iterates the query's public bins
        """
def _tally(rows, field):
    out = {}
    for r in rows:
        v = r.get(field)
        if v:
            out[v] = out.get(v, 0) + 1
    return out

def noisy_histogram(rows, field, bins, epsilon):
    counts = _tally(rows, field)
    mech = LaplaceMechanism(sensitivity=1.0, epsilon=epsilon)
    return {b: max(0, round(mech.release(float(counts.get(b, 0))))) for b in bins}
""",
        # twin of the loop case: the categories come from the schema
        """
import numpy as np
def _freq(records):
    seen = {}
    for r in records:
        seen[r.category] = seen.get(r.category, 0) + 1
    return seen

def release(records, schema, epsilon):
    freq = _freq(records)
    out = {}
    for cat in schema.categories:
        out[cat] = freq.get(cat, 0) + np.random.laplace(0, 1 / epsilon)
    return out
""",
        # ordinary ML: word frequencies normalised into a vocabulary distribution (no noise)
        """
def _word_counts(lines):
    counts = {}
    for line in lines:
        for w in line.split():
            counts[w] = counts.get(w, 0) + 1
    return counts

def unigram(lines):
    counts = _word_counts(lines)
    total = sum(counts.values())
    return {w: c / total for w, c in counts.items()}
""",
        # the counted dict is noised but only its total is released
        """
import numpy as np
def _tally(rows):
    out = {}
    for r in rows:
        out[r.kind] = out.get(r.kind, 0) + 1
    return out

def noisy_total(rows, epsilon):
    counts = _tally(rows)
    return sum(counts.values()) + np.random.laplace(0, 1 / epsilon)
""",
    )

    INVALID = (
        # a helper tallies the observed values; the caller noises every (key, count) pair through a mechanism
        """
def _tally(rows, field):
    out = {}
    for r in rows:
        v = r.get(field)
        if v:
            out[v] = out.get(v, 0) + 1
    return out

def noisy_histogram(rows, field, bins, epsilon):
    counts = _tally(rows, field)  # <-
    mech = LaplaceMechanism(sensitivity=1.0, epsilon=epsilon)
    return {k: max(0, round(mech.release(float(v)))) for k, v in counts.items()}
""",
        # a tally in the helper, a loop over items() in the caller
        """
import numpy as np
def _freq(records):
    seen = {}
    for r in records:
        seen[r.category] = seen.get(r.category, 0) + 1
    return seen

def release(records, epsilon):
    freq = _freq(records)  # <-
    out = {}
    for cat, n in freq.items():
        out[cat] = n + np.random.laplace(0, 1 / epsilon)
    return out
""",
        # a tally of the non-empty field values; the caller's loop releases each key with a mechanism's noise
        """
def count_codes(visits, field):
    table = {}
    for visit in visits:
        code = visit.get(field)
        if code:
            table[code] = table.get(code, 0) + 1
    return table

def dp_code_histogram(visits, field, epsilon):
    hist = count_codes(visits, field)  # <-
    mech = LaplaceMechanism(sensitivity=1.0, epsilon=epsilon)
    out = {}
    for code, c in hist.items():
        out[code] = mech.release(float(c))
    return out
""",
        # pandas value_counts in the helper, noise drawn first and added per key
        """
import numpy as np
def counts_of(frame, col):
    return frame[col].value_counts().to_dict()

def private_counts(frame, col, epsilon):
    observed = counts_of(frame, col)  # <-
    return {k: v + np.random.laplace(scale=1 / epsilon) for k, v in observed.items()}
""",
    )
