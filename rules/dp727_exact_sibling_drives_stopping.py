"""DP727: a statistic accumulated in the same pass over the records as the noised ones (the exact
log-likelihood, loss or inertia) is never noised and decides early stopping or the best run."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, name_words, subscripted_name, target_names, value_refs, walk, words
from dpcheck.rule import Rule

_DRAWS = frozenset({"laplace", "normal", "gauss", "randn", "randn_like", "standard_normal", "normal_",
                    "gumbel", "Laplace", "Normal", "discrete_laplace", "discrete_gaussian"})
_NOISE_WORDS = frozenset({"noise", "noisy", "noised", "privatize", "privatise", "perturb"})
_CHOICE_WORDS = frozenset({"best", "prev", "previous", "old", "last", "tol", "tolerance", "threshold"})


def _noise_call(expr: cst.CSTNode) -> bool:
    for sub in walk(expr):
        if isinstance(sub, cst.Call):
            name = call_name(sub)
            if name in _DRAWS or words(name) & _NOISE_WORDS:
                return True
    return False


def _plain_step(value: cst.BaseExpression) -> bool:
    """``i += 1``, ``start += batch``: a counter step, not a statistic of the records."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    return isinstance(value, (cst.Name, cst.Attribute)) and bool(
        name_words(value) & {"size", "step", "stride", "lr", "rate", "dt", "batch", "len", "length"})


class ExactSiblingDrivesStopping(Rule):
    id = "DP727"
    name = "exact-sibling-drives-stopping"
    category = "general"
    severity = "error"
    summary = ("a statistic summed in the same pass over the records as the noised sufficient statistics is "
               "left exact and decides early stopping or which run is kept")
    rationale = (
        "DP-EM, DP k-means and hand-written DP gradient loops noise the sums they compute in each pass over the "
        "private records (counts, first and second moments, gradient sums). A sibling sum from the same pass — "
        "the log-likelihood, the inertia, the loss — is just as much a function of every record, and when it is "
        "never noised but tested to stop the loop (`if abs(ll - prev_ll) < tol: break`) or to keep the best of "
        "several initialisations (`if ll > best_ll: best = …`), the number of iterations and the released model "
        "are data-dependent choices outside the accounting: the ε charged for the noised statistics does not "
        "cover them. Reported: in one function, a loop that accumulates (`+=`) several names, at least one of "
        "which is later reassigned with noise (a draw, or a helper named for noise); an `if` or `while` whose "
        "test reads another of them (or a name assigned from it) and that breaks, returns, or stores a "
        "best/previous value. Not reported: counters (`i += 1`), tests of the noised sums. "
        "Bad: `total_ll += log_norm.sum()` beside `nk += resp.sum(0)`, `nk = add_noise(nk)`, then "
        "`if total_ll > best_ll:`. Good: noise the log-likelihood too (and charge it), or run a fixed number of "
        "iterations and initialise once."
    )
    TRIGGERS = ("+=",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an augmented addition, a loop, an ``if``/``while``, and a noise draw or a call named
        for noise."""
        if not facts.augassigns(ast.Add) or not facts.nodes(ast.If, ast.While):
            return False
        return facts.calls_any(_DRAWS) or any(words(n) & _NOISE_WORDS for n in facts.called)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body, into_scopes=False))
        noised: set[str] = set()
        assigns: list[cst.Assign] = []
        for sub in body:
            if isinstance(sub, cst.Assign):
                assigns.append(sub)
                if _noise_call(sub.value):
                    for t in sub.targets:
                        noised |= target_names(t.target)
        if not noised:
            return
        exact: set[str] = set()
        for loop in body:
            if not isinstance(loop, (cst.For, cst.While)):
                continue
            sums = {}
            for sub in walk(loop.body, into_scopes=False):
                if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign) \
                        and not _plain_step(sub.value):
                    name = subscripted_name(sub.target)
                    if name:
                        sums[name] = sub
            if set(sums) & noised:
                exact |= set(sums) - noised
        if not exact:
            return
        derived = set(exact)
        for sub in assigns:
            if not _noise_call(sub.value) and value_refs(sub.value) & derived:
                for t in sub.targets:
                    derived |= {n for n in target_names(t.target) if n not in noised}
        for sub in body:
            if not isinstance(sub, (cst.If, cst.While)):
                continue
            read = value_refs(sub.test) & derived
            if not read:
                continue
            test_words = set().union(*(words(n) for n in value_refs(sub.test)))
            decides = isinstance(sub, cst.While) or bool(test_words & _CHOICE_WORDS)
            for inner in walk(sub.body, into_scopes=False):
                if isinstance(inner, (cst.Break, cst.Return)):
                    decides = True
                elif isinstance(inner, cst.Assign) and any(
                        words(n) & {"best"} for t in inner.targets for n in target_names(t.target)):
                    decides = True
            if decides:
                name = sorted(read, key=lambda n: (n not in exact, bool(words(n) & _CHOICE_WORDS), n))[0]
                self.report(
                    sub.test if isinstance(sub, cst.If) else sub,
                    f"`{name}` is summed from the records in the same pass as the noised statistics "
                    f"({', '.join(sorted(noised)[:3])}) but is never noised, and it decides when to stop or "
                    "which run to keep: a data-dependent choice outside the privacy accounting; noise it and "
                    "charge it, or use a fixed iteration count",
                )

    VALID = (
        # twin: the log-likelihood is noised like the moments before it is tested
        """
import numpy as np
def dp_em(x, k, iters, sigma, tol):
    prev = None
    for _ in range(iters):
        nk = np.zeros(k)
        ll = 0.0
        for row in x:
            r = responsibilities(row)
            nk += r
            ll += np.log(r.sum())
        nk = nk + np.random.normal(0, sigma, k)
        ll = ll + np.random.normal(0, sigma)
        if prev is not None and abs(ll - prev) < tol:
            break
        prev = ll
    return nk
""",
        # twin: fixed iteration count, the exact inertia only printed
        """
import numpy as np
def dp_kmeans(x, centers, iters, scale):
    for it in range(iters):
        sums = np.zeros_like(centers)
        inertia = 0.0
        for row in x:
            j = np.argmin(((centers - row) ** 2).sum(1))
            sums[j] += row
            inertia += ((centers[j] - row) ** 2).sum()
        sums = sums + np.random.laplace(0, scale, sums.shape)
        print(it, inertia)
    return sums
""",
        # a counter decides the stop, not a statistic
        """
import numpy as np
def noisy_passes(x, sigma, limit):
    total = 0.0
    step = 0
    while True:
        for row in x:
            total += row.sum()
            step += 1
        total = total + np.random.normal(0, sigma)
        if step > limit:
            break
    return total
""",
        # ordinary ML: early stopping on the loss with input-noise augmentation, no sibling sum noised
        """
import torch
def train(model, loader, opt, patience):
    best = float("inf")
    for epoch in range(100):
        epoch_loss = 0.0
        for x, y in loader:
            x = x + 0.1 * torch.randn_like(x)
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad(); loss.backward(); opt.step()
            epoch_loss += loss.item()
        if epoch_loss < best:
            best = epoch_loss
""",
    )

    INVALID = (
        # DP-EM: moments noised by a helper, the exact log-likelihood picks the best initialisation and stops
        """
import torch
def add_noise(t, s):
    return t + s * torch.randn_like(t)
def fit_dp_em(data, k, n_init, iters, s, tol):
    best_ll, best = -float("inf"), None
    for init in range(n_init):
        w, mu = start(data, k)
        prev = None
        for _ in range(iters):
            nk = torch.zeros(k)
            m1 = torch.zeros(k, data.shape[1])
            total_ll = torch.tensor(0.0)
            for batch in data.split(256):
                r, lp = e_step(batch, w, mu)
                nk += r.sum(0)
                m1 += r.t() @ batch
                total_ll += lp.sum()
            nk = add_noise(nk, s)
            m1 = add_noise(m1, s)
            w, mu = nk / nk.sum(), m1 / nk[:, None]
            ll = float(total_ll)
            if prev is not None and abs(ll - prev) <= tol:  # <-
                break
            prev = ll
        if ll > best_ll:  # <-
            best_ll, best = ll, (w, mu)
    return best
""",
        # DP k-means: Laplace on the sums, exact inertia stops the loop
        """
import numpy as np
def private_kmeans(x, c, epsilon, iters):
    last = np.inf
    for _ in range(iters):
        sums = np.zeros_like(c)
        cnt = np.zeros(len(c))
        inertia = 0.0
        for row in x:
            j = np.argmin(((c - row) ** 2).sum(1))
            sums[j] += row
            cnt[j] += 1
            inertia += ((c[j] - row) ** 2).sum()
        sums = sums + np.random.laplace(0, 2 / epsilon, sums.shape)
        c = sums / np.maximum(cnt, 1)[:, None]
        if last - inertia < 1e-4:  # <-
            break
        last = inertia
    return c
""",
        # hand-written DP gradient sum, the exact summed loss keeps the best weights
        """
import numpy as np
def dp_gd(X, y, w, sigma, clip, steps):
    best_loss, best_w = np.inf, w
    for t in range(steps):
        g = np.zeros_like(w)
        loss = 0.0
        for xi, yi in zip(X, y):
            gi = grad(w, xi, yi)
            g += gi / max(1.0, np.linalg.norm(gi) / clip)
            loss += np.log1p(np.exp(-yi * xi @ w))
        g = g + np.random.normal(0, sigma * clip, g.shape)
        w = w - 0.1 * g / len(X)
        if loss < best_loss:  # <-
            best_loss, best_w = loss, w.copy()
    return best_w
""",
        # a while loop that runs until the exact objective stops moving
        """
import numpy as np
def dp_em_until(x, k, sigma, tol):
    gain = np.inf
    old = -np.inf
    while gain > tol:  # <-
        counts = np.zeros(k)
        obj = 0.0
        for row in x:
            r = resp(row)
            counts += r
            obj += np.log(r.sum())
        counts = counts + np.random.normal(0, sigma, k)
        gain = obj - old
        old = obj
    return counts
""",
    )
