"""DP319: the sampling or noise randomness of composed steps is reset to a known state each step."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: calls that put a global generator into a chosen state
_SEEDERS = frozenset({"seed", "manual_seed", "set_seed", "manual_seed_all"})
#: receivers whose ``seed``-like call resets the generator the draws below use
_GLOBAL_RECEIVERS = frozenset({"random", "np.random", "numpy.random", "torch", "torch.cuda", "tf.random",
                               "tensorflow.random", "onp.random", "jnp.random"})
#: constructors of a generator object seeded by their first argument
_CONSTRUCTORS = frozenset({"default_rng", "RandomState", "Random"})
_SEED_KEYWORDS = frozenset({"seed", "x", "a"})
#: draws that pick which records, users or clients a step sees
_SELECTIONS = frozenset({"sample", "choice", "permutation", "shuffle", "randperm", "choices"})
#: draws of privacy noise
_NOISES = frozenset({"normal", "laplace", "gauss", "normalvariate", "randn", "standard_normal", "gumbel",
                     "exponential", "randn_like", "normal_", "binomial"})
#: words of a seed derived from the public position in the run
_POSITION_WORDS = frozenset({"round", "rnd", "epoch", "step", "iteration", "iter", "it", "comm", "rounds"})
#: words of a function whose seeded draws are evaluation, plotting or data simulation, not a DP step
_OFFLINE_WORDS = frozenset({"eval", "evaluate", "evaluation", "test", "plot", "visualize", "visualise",
                            "benchmark", "simulate", "toy", "load", "split", "partition", "dataset",
                            "attack", "audit"})


def _receiver(call: cst.Call) -> str | None:
    return dotted(call.func.value) if isinstance(call.func, cst.Attribute) else None


def _fresh(seed: cst.BaseExpression) -> bool:
    """``None``, the clock or the OS entropy pool: a state nobody can recompute."""
    if isinstance(seed, cst.Name) and seed.value == "None":
        return True
    return any(isinstance(n, cst.Call) and (call_name(n) in ("time", "time_ns", "urandom", "randbits", "token_bytes",
                                                              "randint", "getrandbits", "perf_counter")
                                            or (dotted(n.func) or "").startswith("secrets."))
               for n in walk(seed))


def _assigned_names(scope: cst.CSTNode) -> set[str]:
    out: set[str] = set()
    for node in walk(scope):
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        for target in targets:
            out.update(n.value for n in walk(target) if isinstance(n, cst.Name))
            out.update(dotted(n) or "" for n in walk(target) if isinstance(n, cst.Attribute))
    return out


class RandomnessResetPerStep(Rule):
    id = "DP319"
    name = "randomness-reset-per-step"
    category = "general"
    severity = "error"
    summary = ("a composed step's subsample or noise comes right after a reseed to a state that is the same "
               "in every step, or fixed by the public step number")
    rationale = (
        "An accountant that composes T subsampled (or noised) steps assumes each step draws fresh, secret "
        "randomness: a new Poisson/uniform subsample and independent noise. Resetting the global generator "
        "to the same seed inside the step loop (`for t in range(T): random.seed(s); batch = random.sample(D, m)`) "
        "makes every step draw the identical subset and the identical noise vector, so T steps spend the budget "
        "of T distinct releases on one subset and the noise averages away nothing; amplification by "
        "subsampling does not apply to a subset that is the same each time. Seeding the selection with the "
        "public round number (`np.random.seed(round_idx); clients = np.random.choice(N, m, replace=False)`) "
        "makes who takes part in each round known to anyone, which the subsampled accountant also assumes "
        "away. Reported: a global `seed`/`manual_seed`/`set_seed` call (or a generator built with "
        "`default_rng`/`RandomState`/`Random`), inside a loop with a seed no statement of the loop changes, "
        "followed in that loop by a subsample or noise draw from that generator; or with a seed that is the "
        "loop's or the function's round/step/epoch counter (alone or offset by constants, `2026 + round_t`), "
        "followed by a selection draw (`choice`, `sample`, `permutation`, `shuffle`, `randperm`). "
        "Not reported: a seed that changes every iteration for another reason, the clock or OS entropy, "
        "seeds in evaluation, plotting, simulation, data loading/splitting, attack/audit or test code, and "
        "modules with neither a noise draw, an accountant call nor a definition named for DP. "
        "Fix: seed once before the loop (or not at all) and let the steps draw from the advancing generator; "
        "use a generator nobody can reproduce for the sampling and the noise."
    )
    TRIGGERS = ("seed", "default_rng", "RandomState", "Random(")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a seeding call or seeded constructor and a selection or noise draw in the same file."""
        return bool(facts.called & (_SEEDERS | _CONSTRUCTORS)) and bool(facts.called & (_SELECTIONS | _NOISES))

    VALID = (
        # seeded once, before the loop: each step draws a new subset and new noise
        """
import random
import numpy as np
def run(private, T, m, sigma, seed):
    random.seed(seed)
    for t in range(T):
        batch = random.sample(private, m)
        total = sum(batch) + np.random.normal(0, sigma)
    return total
""",
        # the seed is re-assigned in the loop from OS entropy: every step starts from a new, secret state
        """
import os
import numpy as np
def noisy_steps(grads, sigma, T):
    out = []
    for t in range(T):
        s = int.from_bytes(os.urandom(4), "little")
        np.random.seed(s)
        out.append(grads[t] + np.random.normal(0, sigma, grads[t].shape))
    return out
""",
        # evaluation over repeated trials with a fixed seed: not a DP step
        """
import numpy as np
from opacus import PrivacyEngine
def evaluate_runs(model, test_x, runs, sigma):
    scores = []
    for r in range(runs):
        np.random.seed(0)
        idx = np.random.choice(len(test_x), 100, replace=False)
        scores.append(model.score(test_x[idx]))
    return scores
""",
        # non-DP federated baseline: clients seeded by round, no noise or accountant in the file
        """
import numpy as np
def client_sampling(round_idx, n_total, n_per_round):
    np.random.seed(round_idx)
    return np.random.choice(range(n_total), n_per_round, replace=False)
""",
        # a per-seed sweep: the loop's own variable is the seed, the draws initialise a model
        """
import torch
def sweep(seeds, epsilon, train):
    results = []
    for seed in seeds:
        torch.manual_seed(seed)
        w = torch.randn(10)
        results.append(train(w, epsilon))
    return results
""",
        # the round number picks the clients, but the seed is mixed with a secret drawn once per run
        """
import secrets
import numpy as np
def pick_clients(round_idx, n_total, m, sigma, update):
    np.random.seed(secrets.randbits(32))
    chosen = np.random.choice(n_total, m, replace=False)
    return chosen, update + np.random.normal(0, sigma, update.shape)
""",
        # a generator built once per run from a caller's seed; the round only indexes the draws
        """
import numpy as np
def make_selector(seed, num_clients, k, sigma):
    rng = np.random.default_rng(seed)
    def select(round_t):
        return rng.choice(num_clients, size=k, replace=False), rng.normal(0, sigma)
    return select
""",
        # a fresh generator per step, built from the step's own secret entropy
        """
import numpy as np
def steps(updates, sigma, clip):
    out = []
    for u in updates:
        rng = np.random.default_rng()
        out.append(np.clip(u, -clip, clip) + rng.normal(0, sigma * clip, u.shape))
    return out
""",
        # a plain FedAvg aggregator: its only "DP" is a called schedule (dynamic programming), no noise or accountant
        """
import numpy as np
from opacus import PrivacyEngine
class Aggregator:
    def client_sampling(self, round_idx, total, per_round):
        np.random.seed(round_idx)
        return np.random.choice(range(total), per_round, replace=False)

    def schedule(self, scheduler, mode):
        return scheduler.DP_schedule(mode)
""",
    )
    INVALID = (
        # clients of each round from a generator seeded with a public constant plus the round number
        """
import numpy as np
from opacus.accountants import RDPAccountant
def pick_round_clients(round_t, num_clients, k):
    return np.random.default_rng(2026 + round_t).choice(num_clients, size=k, replace=False)  # <-

def dp_server_lr(cfg):
    return cfg.get("dp_lr", cfg["lr"])
""",
        # a generator rebuilt from the same seed inside the step loop draws the same noise each step
        """
import numpy as np
def release_steps(sums, sens, epsilon, seed):
    out = []
    for s in sums:
        rng = np.random.RandomState(seed)  # <-
        out.append(s + rng.laplace(0, sens / epsilon, s.shape))
    return out
""",
        # AdaDPSyn-like: the private subset is re-drawn after resetting to the same seed in every step
        """
import random
import numpy as np
from prv_accountant import Accountant
def synthesize(private, steps, m, sigma, sample_seed):
    out = []
    for t in range(steps):
        random.seed(sample_seed)  # <-
        subset = random.sample(private, m)
        out.append(np.mean(subset) + np.random.normal(0, sigma))
    return out
""",
        # the same noise vector in each composed step: numpy reseeded with a constant inside the while loop
        """
import numpy as np
def dp_average(points_per_step, clip, noise_multiplier, epsilon):
    k = 0
    released = []
    while k < len(points_per_step):
        np.random.seed(1234)  # <-
        s = points_per_step[k].sum(0)
        released.append(s + np.random.normal(0, clip * noise_multiplier, s.shape))
        k += 1
    return released
""",
        # torch reseeded from a config attribute before each step's noise
        """
import torch
class Trainer:
    def fit(self, model, loader, cfg):
        for xb, yb in loader:
            torch.manual_seed(cfg.noise_seed)  # <-
            g = model.grad(xb, yb).clamp(-cfg.clip, cfg.clip)
            model.apply(g + torch.normal(0.0, cfg.sigma * cfg.clip, g.shape))
""",
        # FL client selection seeded by the public round index, with noise on the aggregate
        """
import numpy as np
class Server:
    def _client_sampling(self, round_idx, client_num_in_total, client_num_per_round):
        np.random.seed(round_idx)  # <-
        return np.random.choice(range(client_num_in_total), client_num_per_round, replace=False)

    def aggregate(self, updates, clip, noise_multiplier):
        avg = sum(updates) / len(updates)
        return avg + np.random.normal(0, clip * noise_multiplier / len(updates), avg.shape)
""",
        # the batch of each epoch is fixed by the epoch number
        """
import numpy as np
def train(X, epochs, batch, sigma, clip, grad):
    w = np.zeros(X.shape[1])
    for epoch in range(epochs):
        np.random.seed(epoch)  # <-
        idx = np.random.permutation(len(X))[:batch]
        g = np.clip(grad(w, X[idx]), -clip, clip).sum(0)
        w -= (g + np.random.laplace(0, sigma * clip, g.shape)) / batch
    return w
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if not node.args or node.args[0].keyword is not None and node.args[0].keyword.value not in _SEED_KEYWORDS:
            return
        if name in _SEEDERS and _receiver(node) in _GLOBAL_RECEIVERS:
            draws_from: str | None = None  # the global generator
        elif name in _CONSTRUCTORS:
            draws_from = self._generator_name(node)
            if draws_from is None:
                return
        else:
            return
        seed = node.args[0].value
        if _fresh(seed) or self._offline(node):
            return
        fa = self.ctx.analysis
        if not fa.has_dp_code() or not self._file_draws_noise():
            return
        at = fa.line_of(node)
        loops = fa.enclosing_loops(node)
        if loops:
            loop = loops[0]
            body = loop.body  # type: ignore[attr-defined]
            changed = _assigned_names(body)
            if isinstance(loop, cst.For):
                changed |= {n.value for n in walk(loop.target) if isinstance(n, cst.Name)}
            refs = {n.value for n in walk(seed) if isinstance(n, cst.Name)} | {
                dotted(n) or "" for n in walk(seed) if isinstance(n, cst.Attribute)}
            varying = bool(refs & changed) or any(isinstance(n, cst.Call) for n in walk(seed))
            draw = self._draw_after(body, at, _SELECTIONS | _NOISES, draws_from, node)
            if not varying and draw:
                self.report(node, f"`{fa.code(node).strip()}` resets the generator to the same state in every "
                                  f"iteration, so `{draw}` below draws the same subsample or noise at each "
                                  "composed step while the accountant counts independent steps; seed once "
                                  "before the loop")
                return
            if self._position_seed(seed, node, loop) and self._draw_after(body, at, _SELECTIONS, draws_from, node):
                self._report_position(node, seed)
            return
        fn = fa.enclosing_function(node)
        if fn is not None and self._position_seed(seed, node, None) and self._draw_after(
                fn.body, at, _SELECTIONS, draws_from, node):
            self._report_position(node, seed)

    def _generator_name(self, node: cst.Call) -> str | None:
        """``rng`` of ``rng = default_rng(s)``, or ``""`` when the constructor is drawn from directly."""
        parent = self.ctx.analysis.parent(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return ""
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return dotted(parent.targets[0].target)
        return None

    def _report_position(self, node: cst.Call, seed: cst.BaseExpression) -> None:
        fa = self.ctx.analysis
        self.report(node, f"the selection after `{fa.code(node).strip()}` is fixed by the public step number "
                          f"`{fa.code(seed).strip()}`: which records or clients take part is known to anyone, "
                          "while amplification by subsampling assumes a secret random sample each step")

    def _position_seed(self, seed: cst.BaseExpression, node: cst.CSTNode, loop: cst.CSTNode | None) -> bool:
        """The seed is the loop's counter or a parameter of the function named for a round/step/epoch, alone or
        offset by constants (``2026 + round_t``)."""
        names = [n.value for n in walk(seed) if isinstance(n, cst.Name)]
        if len(names) != 1 or not all(isinstance(n, (cst.Name, cst.BinaryOperation, cst.Integer, cst.BaseBinaryOp))
                                      for n in walk(seed)):
            return False
        name = names[0]
        if not words(name) & _POSITION_WORDS:
            return False
        if isinstance(loop, cst.For) and name in {n.value for n in walk(loop.target) if isinstance(n, cst.Name)}:
            return True
        fn = self.ctx.analysis.enclosing_function(node)
        return fn is not None and any(p.name.value == name for p in fn.params.params)

    def _draw_after(self, scope: cst.CSTNode, line: int, names: frozenset[str], draws_from: str | None,
                    seeding: cst.Call) -> str | None:
        """The first draw in ``scope`` at or after ``line`` from the generator the seeding call set."""
        fa = self.ctx.analysis
        for sub in walk(scope):
            if not (isinstance(sub, cst.Call) and call_name(sub) in names and fa.line_of(sub) >= line):
                continue
            receiver = sub.func.value if isinstance(sub.func, cst.Attribute) else None
            if draws_from is None:
                if fa.line_of(sub) > line and (_receiver(sub) in _GLOBAL_RECEIVERS or isinstance(sub.func, cst.Name)):
                    return fa.code(sub.func).strip()
            elif (draws_from == "" and receiver is seeding) or (
                    draws_from and receiver is not None and dotted(receiver) == draws_from):
                return fa.code(sub.func).strip()
        return None

    def _file_draws_noise(self) -> bool:
        """The module adds privacy noise, runs an accountant, or defines a function or class named for DP."""
        fa = self.ctx.analysis
        for sub in fa.nodes(cst.Call):
            name = call_name(sub)  # type: ignore[arg-type]
            if name in _NOISES or words(name or "") & {"accountant", "rdp", "epsilon", "noise", "noisy", "privatize",
                                                       "privatise"}:
                return True
        return any(words(d.name.value) & {"dp", "private", "privacy", "privately"}  # type: ignore[attr-defined]
                   for kind in (cst.FunctionDef, cst.ClassDef) for d in fa.nodes(kind))

    def _offline(self, node: cst.CSTNode) -> bool:
        path = self.ctx.path.replace("\\", "/")
        base = path.rsplit("/", 1)[-1]
        if base.startswith("test_") or base.endswith("_test.py") or "/tests/" in f"/{path}":
            return True
        fn = self.ctx.analysis.enclosing_function(node)
        return fn is not None and bool(words(fn.name.value) & _OFFLINE_WORDS)
