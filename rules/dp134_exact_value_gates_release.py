"""DP134: an exact private value decides whether (or what) a noisy release happens: a group noised only when
its exact count is non-zero, a tree node made a leaf on its exact size or purity."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.exactgate import ExactGate, _config_root, exact_gates
from dpcheck.rule import Rule


def _config_value(shared: str | None) -> bool:
    """(b85) ``self.config``, ``cfg``, ``args``: the only value the test shares with the release is the run's
    configuration (public), not a record (``exact_gates`` names a data name first when there is one)."""
    return bool(shared) and _config_root(shared)


def _gates(facts: AstFacts) -> list[ExactGate]:
    return facts.memo("exactgate", lambda: exact_gates(facts.tree))


class ExactValueGatesRelease(Rule):
    id = "DP134"
    name = "exact-value-gates-release"
    category = "general"
    severity = "error"
    summary = ("a branch on an exact private value (a count, a membership, a node's size or purity, a batch loss) "
               "decides whether the noisy value or private step is released, or where a recursive partition stops")
    rationale = (
        "Noise protects the value it is added to, not the decisions taken before it. When the test of an `if` "
        "reads the same data as the value the branch then noises — `if count != 0: centre = (s + Lap) / (count + "
        "Lap)`, `if k not in labels: continue` before the noisy count of group k, a threshold skipped when one "
        "side of the split is empty — the output shows which way the exact test went (a centre that did not "
        "move, a missing group), and no ε covers that. The same holds for a recursive partition of the data "
        "(a decision tree, a k-d tree) that stops on the exact size or purity of a node (`if len(X) < "
        "min_samples: return leaf`, `if len(np.unique(y)) == 1`) in code that draws noise: the released shape "
        "reveals un-noised counts. The roles decide, not the names: the noised value is what a draw is added "
        "to (or a mechanism's argument); the test must share a data value with it that is not a `range` "
        "counter, not a parameter of the noise's scale and not itself noisy; the partitioned value is the "
        "parameter the recursion hands a data-chosen part of (`X[mask]`, a `groupby` group, `split(D, a, v)`), "
        "not a copy or a list shrinking by one attribute. A private optimizer's step (the optimizer a privacy engine returned from `make_private`, or was attached to) taken only when the exact loss it backpropagates passes a test (`if d_loss > 0.15: d_loss.backward(); opt.step()`) is the same leak: whether each noisy update happened is released without noise. Not reported: both arms releasing noise (the empty "
        "case noising a zero), tests on noisy values (the sparse vector technique, a noisy count), tests of a "
        "value's kind (`is None`, `ndim`), depth limits, guards outside loops, a "
        "degenerate-input guard in a loop over the table's columns (`for col in df.columns: if len(df[col].dropna()) "
        "<= 1:`: too few values for the statistic to exist), recursions that sum an exact "
        "statistic noised as a whole, evaluation/test/baseline functions. Fix: release every group's noisy "
        "value whatever its exact count (noise a zero), and stop or split on noisy counts."
    )
    TRIGGERS = ("laplace", "normal", "gumbel", "randn", "gauss", "randomise", "randomize", "geometric", "cauchy",
                "make_private", ".attach(")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """The same computation as the report (``exactgate`` on CPython's ``ast``): the gate is exact."""
        return bool(_gates(facts))

    VALID = (
        # (b85) twin of the masked-fill case: the emptiness test reads only the configuration (tube radii) and
        # the fill's level, both public, so the skip reveals nothing about the data
        """
import numpy as np
class Painter:
    def paint(self, img, strokes, spacing):
        level = self.config.fill_level
        for s in strokes:
            for seg in grow(s, spacing):
                width = self.config.width_range[1] * (1 - 0.3 * len(seg))
                band = _band(seg, width, spacing, img.shape)
                hit = band > 0
                if not np.any(hit):
                    continue
                w = band[hit]
                img[hit] = (1 - w) * img[hit] + w * self.rng.normal(level, 10, size=w.size)
        return img
""",
        # a column with fewer than two values has no mean or spread: a degenerate-input guard per attribute
        """
import numpy as np
def dp_bounds(df, epsilon, sens):
    bounds = {}
    for col in df.select_dtypes(include=[np.number]).columns:
        values = df[col].dropna()
        if len(values) <= 1:
            bounds[col] = (np.nan, np.nan)
            continue
        mean = float(values.mean()) + np.random.laplace(0, sens / epsilon)
        bounds[col] = (mean - 3, mean + 3)
    return bounds
""",
        # a single negative probability marks a numeric attribute: a test of the value's kind
        """
import numpy as np
def synthesize(rows, preds, eps, scale):
    out = []
    for row, (vals, probas) in zip(rows, preds):
        if len(probas) == 1 and probas[0] < 0:
            mean, std = vals[0]
            out.append(np.random.normal(mean, std * scale))
        else:
            out.append(vals[int(np.argmax(probas))])
    return out
""",
        # a -1 label marks a missing value
        """
import numpy as np
def noisy_labels(groups, eps):
    out = {}
    for key, labels in groups.items():
        if labels[0] == -1:
            continue
        out[key] = len(labels) + np.random.laplace(0, 1 / eps)
    return out
""",
        # every cluster's centre is noised, empty or not: the empty case noises a zero count
        """
import numpy as np
def update_centres(sums, counts, eps, d):
    centres = []
    for s, c in zip(sums, counts):
        if c > 0:
            centres.append((s + np.random.laplace(0, d / eps, len(s))) / (c + np.random.laplace(0, 1 / eps)))
        else:
            centres.append(np.random.laplace(0, d / eps, len(s)) / max(1.0, np.random.laplace(0, 1 / eps)))
    return centres
""",
        # the test reads the noisy count (post-processing), not the exact one
        """
import numpy as np
def noisy_histogram(values, domain, eps, threshold):
    out = {}
    for v in domain:
        noisy = sum(1 for x in values if x == v) + np.random.laplace(0, 1 / eps)
        if noisy > threshold:
            out[v] = noisy
    return out
""",
        # a tree that stops on depth only, with leaves given noisy counts
        """
import numpy as np
def grow(rows, labels, depth, eps, classes):
    if depth == 0:
        return {c: np.sum(labels == c) + np.random.laplace(0, 1 / eps) for c in classes}
    left = rows[:, 0] < 0.5
    return (grow(rows[left], labels[left], depth - 1, eps, classes),
            grow(rows[~left], labels[~left], depth - 1, eps, classes))
""",
        # the branch tests the privacy budget, not the data
        """
import numpy as np
def release_counts(groups, eps):
    out = []
    for g in groups:
        if eps > 0:
            out.append(len(g) + np.random.laplace(0, 1 / eps))
    return out
""",
        # a recursion computing an exact statistic that is noised once as a whole
        """
import numpy as np
def paths(graph, frontier, k):
    if len(frontier) < k:
        return 0
    total = 0
    for v in frontier:
        total += paths(graph, set(graph[v]) & frontier, k - 1)
    return total
def private_paths(graph, k, eps, sens):
    return paths(graph, set(graph), k) + np.random.laplace(0, sens / eps)
""",
        # evaluation of a noisy mechanism: skipping empty groups decides nothing that is released
        """
import numpy as np
def evaluate_error(groups, eps):
    errs = []
    for g in groups:
        if len(g) == 0:
            continue
        errs.append(abs(np.random.laplace(0, 1 / eps)) / len(g))
    return np.mean(errs)
""",
        # a loop over the columns whose tests read the column's kind and whether public bounds name it (keys and
        # kind flags, not the data); the noisy counts come after for every column
        """
import numpy as np
import pandas as pd
def noisy_marginals(df, public_bounds, epsilon):
    out = {}
    for c in df.columns:
        is_num = pd.api.types.is_numeric_dtype(df[c])
        if is_num and c not in public_bounds:
            public_bounds[c] = [0.0, 1.0]
        counts = df[c].value_counts().reindex(range(10), fill_value=0)
        out[c] = counts.to_numpy() + np.random.laplace(0, 1 / epsilon, 10)
    return out
""",
        # the same loss-gated update on an optimizer no privacy engine made private (a non-private baseline)
        """
import torch
def train_disc(disc, opt, real, fake, bce):
    loss = bce(disc(real), torch.ones(len(real))) + bce(disc(fake), torch.zeros(len(fake)))
    if loss > 0.15:
        loss.backward()
        opt.step()
    opt.zero_grad()
""",
        # the private step is taken every time; the loss only sets the learning rate
        """
from opacus import PrivacyEngine
def fit(model, optimizer, loader, loss_fn, epsilon, delta, epochs, noise_multiplier):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=noise_multiplier, max_grad_norm=1.0)
    for x, y in loader:
        loss = loss_fn(model(x), y)
        if loss > 2.0:
            optimizer.param_groups[0]["lr"] = 0.01
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
    )

    INVALID = (
        # (b85) the configuration is read beside the data: the test on the exact group size still decides whether
        # the group's noisy mean is released (a data name is shared, not only ``self.config``)
        """
import numpy as np
class GroupMeans:
    def release(self, data, eps):
        out = {}
        for g in self.config.groups:
            rows = data[data["group"] == g]
            if len(rows) < self.config.min_rows:  # <-
                continue
            out[g] = rows["value"].mean() + np.random.laplace(0, self.config.bound / eps)
        return out
""",
        # the twin: the same guard on the groups of a partition of the records
        """
import numpy as np
def dp_group_bounds(df, key, col, epsilon, sens):
    bounds = {}
    for g, part in df.groupby(key):
        values = part[col].dropna()
        if len(values) <= 1:  # <-
            bounds[g] = (np.nan, np.nan)
            continue
        mean = float(values.mean()) + np.random.laplace(0, sens / epsilon)
        bounds[g] = (mean - 3, mean + 3)
    return bounds
""",
        # twin of the marker case: one exact positive count decides whether the group is noised
        """
import numpy as np
def synthesize(groups, eps):
    out = []
    for vals, counts in groups:
        if len(counts) == 1 and counts[0] > 0:  # <-
            out.append(counts[0] + np.random.laplace(0, 1 / eps))
    return out
""",
        # a cluster keeps its old centre when its exact member count is zero
        """
import numpy as np
class PrivateKMeans:
    def _noise(self, scale):
        return np.random.laplace(0, scale)
    def step(self, aggregates, eps, dim):
        for j, agg in enumerate(aggregates):
            if agg[1] > 0:  # <-
                self.centres[j] = (agg[0] + self._noise(dim / eps)) / (agg[1] + self._noise(1 / eps))
""",
        # a group absent from the exact labels is skipped before its noisy count
        """
import numpy as np
def dp_group_means(X, assign, k, eps, lo, hi):
    means = {}
    for j in range(k):
        if not np.any(assign == j):  # <-
            continue
        members = X[assign == j]
        n_noisy = members.shape[0] + np.random.laplace(0, 2 / eps)
        means[j] = (members.sum(0) + np.random.laplace(0, 2 * (hi - lo) / eps, X.shape[1])) / n_noisy
    return means
""",
        # a threshold is skipped when one side of the exact split is empty
        """
import numpy as np
def noisy_split_scores(col, target, cuts, epsilon):
    scores = []
    for c in cuts:
        below = target[col < c]
        above = target[col >= c]
        if len(below) == 0 or len(above) == 0:  # <-
            continue
        scores.append(len(below) + np.random.laplace(0, 2 / epsilon) - len(above))
    return scores
""",
        # a tree stops on the exact node size and on exact purity
        """
import numpy as np
def fit_node(X, y, depth, eps, min_rows):
    if len(X) < min_rows:  # <-
        return {"leaf": np.bincount(y) + np.random.laplace(0, 1 / eps, 2)}
    feature = np.random.randint(X.shape[1])
    mask = X[:, feature] > np.median(X[:, feature])
    return {"f": feature, "l": fit_node(X[mask], y[mask], depth + 1, eps, min_rows),
            "r": fit_node(X[~mask], y[~mask], depth + 1, eps, min_rows)}
""",
        # a leaf when every record of the exact node shares a class (split by a project helper)
        """
import numpy as np
def split_rows(rows, attr, value):
    return [r for r in rows if r[attr] == value]
def build(rows, attrs, epsilon):
    labels = [r[-1] for r in rows]
    if labels.count(labels[0]) == len(labels):  # <-
        return labels[0]
    a = attrs[int(np.argmax(np.random.gumbel(scale=2 / epsilon, size=len(attrs))))]
    return {v: build(split_rows(rows, a, v), attrs, epsilon) for v in (0, 1)}
""",
        # the private discriminator steps only when its exact loss on the private batch is high
        """
from opacus import PrivacyEngine
def train_gan(disc, d_opt, gen, loader, bce, noise_multiplier, epochs):
    engine = PrivacyEngine()
    disc, d_opt, loader = engine.make_private(module=disc, optimizer=d_opt, data_loader=loader,
                                              noise_multiplier=noise_multiplier, max_grad_norm=1.0)
    for _ in range(epochs):
        for real in loader:
            d_loss = bce(disc(real), 1.0) + bce(disc(gen.sample(len(real))), 0.0)
            if d_loss > 0.15:  # <-
                d_loss.backward()
                d_opt.step()
            d_opt.zero_grad()
""",
        # a private optimizer skipped when the exact batch loss is already small (Opacus 0.x attach)
        """
from opacus import PrivacyEngine
def train(model, opt, loader, loss_fn, sigma, clip):
    engine = PrivacyEngine(model, noise_multiplier=sigma, max_grad_norm=clip)
    engine.attach(opt)
    for x, y in loader:
        err = loss_fn(model(x), y)
        if err.item() >= 0.05:  # <-
            err.backward()
            opt.step()
        opt.zero_grad()
""",
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._lines: dict[int, ExactGate] | None = None

    def _by_line(self) -> dict[int, ExactGate]:
        if self._lines is None:
            tree = self.ctx.python_tree() or ast.Module(body=[], type_ignores=[])
            self._lines = {g.line: g for g in exact_gates(tree) if not _config_value(g.shared)}
        return self._lines

    def visit_If(self, node: cst.If) -> None:
        gate = self._by_line().get(self.ctx.analysis.line_of(node))
        if gate is None:
            return
        test = self.ctx.analysis.code(node.test).strip()
        if gate.step:
            message = (f"the private optimizer's step on line {gate.noise_line} is taken only when `{test}` holds, a "
                       f"test on the exact loss `{gate.shared}` of the private batch: whether the noisy update "
                       "happens is released without noise; step every time (or decide on a noisy value)")
        elif gate.partition:
            message = (f"the recursion on parts of `{gate.shared}` (line {gate.noise_line}) stops when `{test}` holds, "
                       f"a test on the exact records of `{gate.shared}`: the released structure shows its outcome; "
                       "stop on a noisy count or a public limit (depth)")
        else:
            message = (f"the test `{test}` reads `{gate.shared}` exactly and decides whether the noisy release on "
                       f"line {gate.noise_line} happens: the output shows the exact outcome (an empty group, an "
                       "unmoved centre); release a noisy value in every case")
        self.report(node, message)
