"""DP720: ε read from an accountant made fresh each round is collected per round, and the last / largest of
those per-round values is reported as the run's spend."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, walk, words
from dpcheck.rule import Rule

_ACCOUNTANTS = frozenset({
    "PrivacyEngine", "RDPAccountant", "PRVAccountant", "GaussianAccountant", "GDPAccountant",
    "RdpAccountant", "PLDAccountant", "GaussianMomentsAccountant", "MomentsAccountant",
})
_ROUND_WORDS = frozenset({"round", "rounds", "epoch", "epochs", "comm", "communication", "iteration", "iterations"})
_READ_WORDS = frozenset({"epsilon", "eps", "spent", "privacy"})
_EPS_WORDS = frozenset({"epsilon", "epsilons", "eps"})
_TOTAL_WORDS = frozenset({"epsilon", "eps", "spent", "budget", "privacy", "epsilons"})


def _round_loop(loop: cst.CSTNode) -> bool:
    """``for r in range(num_rounds)``, ``for epoch in …``, ``while round < R``."""
    if isinstance(loop, cst.For):
        names = list(walk(loop.target)) + list(walk(loop.iter))
    elif isinstance(loop, cst.While):
        names = list(walk(loop.test))
    else:
        return False
    return any(isinstance(n, cst.Name) and words(n.value) & _ROUND_WORDS for n in names)


def _engine_target(statement: cst.CSTNode) -> str | None:
    """``engine = PrivacyEngine()``, ``acc = RDPAccountant()``."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return None
    value = statement.value
    if isinstance(value, cst.Call) and call_name(value) in _ACCOUNTANTS:
        return last_name(statement.targets[0].target)
    return None


def _reads_epsilon(scope: cst.CSTNode, engine: str) -> bool:
    """``engine.get_epsilon(δ)``, ``engine.accountant.get_privacy_spent(…)``, ``compute_eps(engine)``."""
    for node in walk(scope, into_scopes=False):
        if not isinstance(node, cst.Call) or not words(call_name(node)) & _READ_WORDS:
            continue
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
        while isinstance(receiver, cst.Attribute) and last_name(receiver) != engine:
            receiver = receiver.value
        if last_name(receiver) == engine or any(last_name(a.value) == engine for a in node.args):
            return True
    return False


def _fresh_engine_functions(module: cst.Module) -> set[str]:
    """Functions and methods (not ``__init__``) that build an accountant and read ε from it: every call of them
    starts the count at zero."""
    found = set()
    for fn in walk(module):
        if not isinstance(fn, cst.FunctionDef) or fn.name.value == "__init__":
            continue
        for node in walk(fn, into_scopes=False):
            engine = _engine_target(node)
            if engine and _reads_epsilon(fn, engine):
                found.add(fn.name.value)
                break
    return found


def _root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``result['epsilon']`` → ``result``; ``float(eps)`` → ``eps``."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("float", "round") \
                and expr.args:
            expr = expr.args[0].value
        else:
            return expr


def _eps_name(name: str | None) -> bool:
    return bool(name) and bool(words(name) & _EPS_WORDS)


class PerRoundEpsilonReportedAsTotal(Rule):
    id = "DP720"
    name = "per-round-epsilon-reported-as-total"
    category = "general"
    severity = "error"
    summary = ("ε from an accountant made fresh each round is collected per round and its last / largest value "
               "is reported as the total spend: the rounds are never composed")
    rationale = (
        "A PrivacyEngine or RDP accountant built inside the round loop (or inside a per-client training "
        "function the round loop calls) starts counting at zero every round, so the ε read from it is the "
        "cost of that round alone. Collecting those values per round and reporting `max(round_eps)` or "
        "`eps_history[-1]` as the run's ε ('final epsilon', 'epsilon spent') states the cost of one round "
        "while the same records were used in every round: the true spend is about the number of rounds times "
        "larger (basic composition), or the composed RDP bound. Reported: in a round loop, an ε-named list "
        "appended with ε read from an accountant created in that loop, or with the ε returned by a function of "
        "this module that creates its own accountant, and the list's `max(...)` or `[-1]` then used. Not "
        "reported: one accountant built before the loop and stepped across rounds (its last value is the "
        "composed total), per-round values summed (`sum(eps_list)`, `total_eps += max(round_eps)`), code "
        "with no DP context. Fix: keep one accountant across all rounds, or compose the per-round costs."
    )
    TRIGGERS = ("Accountant", "PrivacyEngine")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an accountant constructor call, an ``append`` and a ``max`` call or a ``[-1]``."""
        import ast

        if not facts.calls_any(_ACCOUNTANTS) or not facts.calls_any(frozenset({"append"})):
            return False
        return facts.calls_any(frozenset({"max"})) or any(
            isinstance(n.slice, ast.UnaryOp) and isinstance(n.slice.op, ast.USub)  # type: ignore[attr-defined]
            for n in facts.nodes(ast.Subscript))

    VALID = (
        # twin of the first INVALID case: one engine across all rounds, its last reading is the composed total
        """
from opacus import PrivacyEngine
def run(model, optimizer, loader, num_rounds, sigma, delta):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=sigma, max_grad_norm=1.0)
    eps_history = []
    for rnd in range(num_rounds):
        train_one_round(model, optimizer, loader)
        eps_history.append(engine.get_epsilon(delta))
    return {"final_epsilon": eps_history[-1]}
""",
        # twin of the second INVALID case: the per-round maxima are added up across rounds
        """
from opacus import PrivacyEngine
class Sim:
    def local(self, cid):
        engine = PrivacyEngine()
        model, opt, loader = engine.make_private(module=self.model, optimizer=self.opt,
            data_loader=self.loaders[cid], noise_multiplier=1.0, max_grad_norm=1.0)
        fit(model, opt, loader)
        return {"weights": model.state_dict(), "epsilon": engine.get_epsilon(self.delta)}
    def run(self, num_rounds):
        spent = 0.0
        for rnd in range(num_rounds):
            round_eps = []
            for cid in range(self.n):
                out = self.local(cid)
                round_eps.append(out["epsilon"])
            spent += max(round_eps)
        return spent
""",
        # twin of the third INVALID case: the per-epoch accountants' values are summed
        """
from opacus.accountants import RDPAccountant
def train(model, loader, epochs, sigma, q, delta):
    epoch_eps = []
    for epoch in range(epochs):
        acc = RDPAccountant()
        for x, y in loader:
            model.step(x, y)
            acc.step(noise_multiplier=sigma, sample_rate=q)
        epoch_eps.append(acc.get_epsilon(delta))
    return sum(epoch_eps)
""",
        # an RDP accountant kept outside the loop, clients' readings collected per round
        """
from opacus.accountants import RDPAccountant
def run(clients, num_rounds, sigma, q, delta):
    accountant = RDPAccountant()
    epsilons = []
    for rnd in range(num_rounds):
        for c in clients:
            c.train_round()
        accountant.step(noise_multiplier=sigma, sample_rate=q)
        epsilons.append(accountant.get_epsilon(delta))
    print("max eps", max(epsilons))
""",
        # ordinary ML: the best validation accuracy over epochs
        """
def fit(model, loader, epochs):
    accs = []
    for epoch in range(epochs):
        model.train_epoch(loader)
        accs.append(model.evaluate())
    return max(accs), accs[-1]
""",
        # twin of the fourth INVALID case: the engine lives on the trainer, built once in __init__
        """
from opacus import PrivacyEngine
class Local:
    def __init__(self, model, opt, loader, sigma):
        self.engine = PrivacyEngine()
        self.model, self.opt, self.loader = self.engine.make_private(module=model, optimizer=opt,
            data_loader=loader, noise_multiplier=sigma, max_grad_norm=1.0)
    def local_round(self, delta):
        fit(self.model, self.opt, self.loader)
        return self.engine.get_epsilon(delta)
def federate(local, n_rounds):
    epsilons = []
    for rnd in range(n_rounds):
        eps = local.local_round(1e-5)
        epsilons.append(eps)
    logger.info("privacy spent: %s", epsilons[-1])
""",
    )

    INVALID = (
        # a fresh engine every round, the last round's ε reported as the run's
        """
from opacus import PrivacyEngine
def run(model, optimizer, loader, num_rounds, sigma, delta):
    eps_history = []
    for rnd in range(num_rounds):
        engine = PrivacyEngine()
        model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                       noise_multiplier=sigma, max_grad_norm=1.0)
        train_one_round(model, optimizer, loader)
        eps_history.append(engine.get_epsilon(delta))
    return {"final_epsilon": eps_history[-1]}  # <-
""",
        # a per-client helper builds its own engine; the round's largest client ε is recorded as the spend
        """
from opacus import PrivacyEngine
class Sim:
    def local(self, cid):
        engine = PrivacyEngine()
        model, opt, loader = engine.make_private(module=self.model, optimizer=self.opt,
            data_loader=self.loaders[cid], noise_multiplier=1.0, max_grad_norm=1.0)
        fit(model, opt, loader)
        return {"weights": model.state_dict(), "epsilon": engine.get_epsilon(self.delta)}
    def run(self, num_rounds):
        for rnd in range(num_rounds):
            round_eps = []
            for cid in range(self.n):
                out = self.local(cid)
                round_eps.append(out["epsilon"])
            self.log["epsilon_spent"].append(max(round_eps))  # <-
""",
        # a fresh RDP accountant per epoch, the largest epoch ε printed as the total
        """
from opacus.accountants import RDPAccountant
def train(model, loader, epochs, sigma, q, delta):
    epoch_eps = []
    for epoch in range(epochs):
        acc = RDPAccountant()
        for x, y in loader:
            model.step(x, y)
            acc.step(noise_multiplier=sigma, sample_rate=q)
        epoch_eps.append(acc.get_epsilon(delta))
    total = max(epoch_eps)  # <-
    print("total epsilon", total)
""",
        # a local-training function returns the ε of its own engine; the last round's value is logged as spent
        """
from opacus import PrivacyEngine
def local_round(model, opt, loader, sigma, delta):
    engine = PrivacyEngine()
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=sigma, max_grad_norm=1.0)
    fit(model, opt, loader)
    return model, engine.get_epsilon(delta)
def federate(model, opt, loader, n_rounds):
    epsilons = []
    for rnd in range(n_rounds):
        model, eps = local_round(model, opt, loader, 1.0, 1e-5)
        epsilons.append(eps)
    logger.info("privacy spent: %s", epsilons[-1])  # <-
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        fa = self.ctx.analysis
        fresh_fns: set[str] | None = None
        collected: dict[str, cst.CSTNode] = {}
        for call in walk(node, into_scopes=False):
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "append" and len(call.args) == 1):
                continue
            target = last_name(call.func.value)
            if not _eps_name(target) or target in collected:
                continue
            loops = [loop for loop in fa.enclosing_loops(call) if _round_loop(loop)]
            if not loops:
                continue
            if fresh_fns is None:
                fresh_fns = _fresh_engine_functions(self.ctx.module)
            if self._per_round_value(call.args[0].value, loops[0], fresh_fns):
                collected[target] = loops[0]
        for name, loop in collected.items():
            if self._composed(node, name, loop):
                continue
            uses = self._reductions(node, name)
            if not uses:
                continue
            outside_print = [u for u in uses if not self._in_print(u)]
            use = (outside_print or uses)[0]
            self.report(use, f"`{name}` holds ε from an accountant made fresh each round (line "
                             f"{fa.line_of(loop)} loop), so its last / largest value is one round's cost, not the "
                             f"run's: compose the rounds (one accountant across rounds, or sum the per-round ε)")

    def _per_round_value(self, value: cst.BaseExpression, loop: cst.CSTNode, fresh_fns: set[str]) -> bool:
        """The appended value is ε read from an accountant built in the loop, or the ε a fresh-engine function
        returns (directly or through a name bound in the loop)."""
        engines = {e for n in walk(loop, into_scopes=False) if (e := _engine_target(n))}
        for sub in walk(value):
            if isinstance(sub, cst.Call) and call_name(sub) in fresh_fns:
                return True
            if isinstance(sub, cst.Call) and words(call_name(sub)) & _READ_WORDS:
                if any(isinstance(n, cst.Name) and n.value in engines for n in walk(sub)):
                    return True
        root = last_name(_root(value))
        if root is None:
            return False
        for n in walk(loop, into_scopes=False):
            if not isinstance(n, cst.Assign) or not isinstance(n.value, cst.Call):
                continue
            bound = {last_name(e.value) for t in n.targets if isinstance(t.target, (cst.Tuple, cst.List))
                     for e in t.target.elements}
            bound |= {last_name(t.target) for t in n.targets}
            if root not in bound:
                continue
            if call_name(n.value) in fresh_fns:
                return True
            if words(call_name(n.value)) & _READ_WORDS and any(
                    isinstance(x, cst.Name) and x.value in engines for x in walk(n.value)):
                return True
        return False

    @staticmethod
    def _composed(fn: cst.FunctionDef, name: str, loop: cst.CSTNode) -> bool:
        """``sum(eps_list)`` anywhere in the function, or a running total (``total += …``) kept across rounds."""
        for n in walk(fn, into_scopes=False):
            if isinstance(n, cst.Call) and call_name(n) in ("sum", "fsum", "cumsum") and any(
                    isinstance(x, cst.Name) and x.value == name for x in walk(n)):
                return True
        reset = {last_name(t.target) for n in walk(loop) if isinstance(n, cst.Assign) for t in n.targets}
        for n in walk(loop):
            if isinstance(n, cst.AugAssign) and isinstance(n.operator, cst.AddAssign):
                total = last_name(n.target)
                if total and words(total) & _TOTAL_WORDS and total not in reset:
                    return True
        return False

    @staticmethod
    def _reductions(fn: cst.FunctionDef, name: str) -> list[cst.CSTNode]:
        """``max(name)`` and ``name[-1]`` in the function."""
        found = []
        for n in walk(fn, into_scopes=False):
            if isinstance(n, cst.Call) and call_name(n) == "max" and len(n.args) == 1 \
                    and last_name(n.args[0].value) == name:
                found.append(n)
            elif isinstance(n, cst.Subscript) and last_name(n.value) == name and len(n.slice) == 1:
                index = n.slice[0].slice
                if isinstance(index, cst.Index) and isinstance(index.value, cst.UnaryOperation) \
                        and isinstance(index.value.operator, cst.Minus) \
                        and isinstance(index.value.expression, cst.Integer) and index.value.expression.value == "1":
                    found.append(n)
        return found

    def _in_print(self, node: cst.CSTNode) -> bool:
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        for n in walk(fn, into_scopes=False) if fn is not None else ():
            if isinstance(n, cst.Call) and call_name(n) in ("print", "info", "debug", "log") and fa.inside(node, n):
                return True
        return False
