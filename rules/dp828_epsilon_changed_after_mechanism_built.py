"""DP828: the configured ε is changed after the mechanism object was built from it; the noise keeps the old ε."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_EPS_NAMES = frozenset({"epsilon", "eps", "privacy_budget", "dp_epsilon", "target_epsilon"})
#: words of an object that applies or accounts the privacy noise
_MECHANISM_WORDS = frozenset({"dp", "privacy", "private", "mechanism", "mech", "laplace", "gaussian", "accountant",
                              "noise", "engine", "ledger", "budget", "odometer", "filter", "privatizer", "privatiser",
                              "perturber", "sanitizer", "validator"})
#: words of a method that builds the mechanism (its assignments are the set-up, not a later change)
_SETUP_WORDS = frozenset({"init", "setup", "build", "configure", "reset", "create", "initialize", "initialise",
                          "from", "load"})


def _eps_attr(expr: cst.BaseExpression) -> str | None:
    """``self.config.epsilon`` -> that code, when the attribute names ε and the chain starts at ``self``."""
    text = dotted(expr)
    if not text or not text.startswith("self.") or not isinstance(expr, cst.Attribute):
        return None
    return text if expr.attr.value in _EPS_NAMES else None


class EpsilonChangedAfterMechanismBuilt(Rule):
    id = "DP828"
    name = "epsilon-changed-after-mechanism-built"
    category = "general"
    severity = "error"
    summary = ("a method changes the configured ε (`self.config.epsilon = ...`) after the mechanism object was "
               "built from it; the mechanism keeps the old ε, so the ε reported and saved is not the one the noise "
               "was drawn with")
    rationale = (
        "A generator or analysis class builds its mechanism once (`self.dp = DifferentialPrivacy(epsilon="
        "self.config.epsilon)`) and later adjusts the budget (`self.config.epsilon *= 0.8` when a risk check "
        "fails, `self.config.epsilon = constraints['epsilon']`). The mechanism object copied ε at construction "
        "and never sees the change: the noise is drawn with the old ε while the run's metadata, reports and "
        "compliance checks read the new value, so the privacy loss reported understates (or misstates) the one "
        "incurred, and the retry that should add noise adds none. Reported: an assignment to `self.<...>.epsilon` "
        "in a method other than the set-up, in a class that builds an object from that same attribute in another "
        "method, when the method (or a method of the class it calls) does not rebuild the object or set its ε. "
        "Fix: rebuild the mechanism (and accountant) after changing ε, or pass ε to the mechanism at each call."
    )
    TRIGGERS = ("epsilon", "eps")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an assignment to an ``epsilon`` attribute and a class."""
        if not facts.nodes(ast.ClassDef):
            return False
        for node in facts.nodes(ast.Assign, ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            if any(isinstance(t, ast.Attribute) and t.attr in _EPS_NAMES for t in targets):
                return True
        return False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return cls.may_report(facts)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        fa = self.ctx.analysis
        methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
        # objects built from ε: ``self.dp = Mechanism(epsilon=self.config.epsilon)`` -> {eps code: {"self.dp"}}
        built: dict[str, dict[str, cst.FunctionDef]] = {}
        for method in methods.values():
            for sub in walk(method):
                if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) and len(sub.targets) == 1:
                    target = dotted(sub.targets[0].target) or ""
                    if not target.startswith("self.") or target.count(".") != 1 \
                            or not words(target[5:]) & _MECHANISM_WORDS:
                        continue
                    for arg in sub.value.args:
                        code = _eps_attr(arg.value)
                        if code:
                            built.setdefault(code, {})[target] = method
        if not built:
            return
        for name, method in methods.items():
            if words(name) & _SETUP_WORDS or name.startswith("_init"):
                continue
            for sub in walk(method):
                targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target] \
                    if isinstance(sub, cst.AugAssign) else []
                for t in targets:
                    code = _eps_attr(t)
                    if code is None or code not in built:
                        continue
                    objects = {o: m for o, m in built[code].items() if m is not method}
                    if not objects or self._rebuilds(method, methods, set(objects)):
                        continue
                    shown = ", ".join(sorted(objects))
                    self.report(sub, f"`{code}` is changed here, but {shown} was built from it in "
                                     f"`{next(iter(objects.values())).name.value}` and keeps the old ε: the noise "
                                     f"is drawn with the old ε while the new one is reported; rebuild the mechanism "
                                     f"(and accountant) after changing ε")

    @staticmethod
    def _rebuilds(method: cst.FunctionDef, methods: dict[str, cst.FunctionDef], objects: set[str]) -> bool:
        """``method`` (or a ``self.<m>()`` it calls) reassigns one of ``objects`` or sets its ε."""
        scopes = [method] + [methods[call_name(c)] for c in walk(method) if isinstance(c, cst.Call)
                             and isinstance(c.func, cst.Attribute) and dotted(c.func.value) == "self"
                             and call_name(c) in methods]
        for scope in scopes:
            for sub in walk(scope):
                if isinstance(sub, (cst.Assign, cst.AugAssign)):
                    targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target]
                    for t in targets:
                        code = dotted(t) or ""
                        if code in objects or any(code.startswith(o + ".") for o in objects):
                            return True
                if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                        and (dotted(sub.func.value) or "") in objects \
                        and words(call_name(sub) or "") & {"set", "update", "reset", "epsilon"}:
                    return True
        return False

    VALID = (
        # twin: the mechanism is rebuilt after ε changes
        """
class Generator:
    def __init__(self, config):
        self.config = config
        self.dp = LaplaceMechanism(epsilon=self.config.epsilon)
    def adjust(self, risk):
        if risk > self.config.max_risk:
            self.config.epsilon = max(self.config.epsilon * 0.8, 0.1)
            self.dp = LaplaceMechanism(epsilon=self.config.epsilon)
""",
        # twin: a helper rebuilds it
        """
class Generator:
    def __init__(self, config):
        self.config = config
        self._build()
    def _build(self):
        self.dp = LaplaceMechanism(epsilon=self.config.epsilon)
    def tighten(self):
        self.config.epsilon = self.config.epsilon / 2
        self._build()
""",
        # twin: the mechanism reads ε at every call, nothing copied it
        """
class Release:
    def __init__(self, config):
        self.config = config
    def tighten(self):
        self.config.epsilon = self.config.epsilon / 2
    def answer(self, value):
        return value + laplace(1.0 / self.config.epsilon)
""",
        # ordinary ML: an exploration epsilon decayed per episode
        """
class Agent:
    def __init__(self, epsilon):
        self.epsilon = epsilon
        self.policy = make_policy(hidden=64)
    def decay(self):
        self.epsilon = max(self.epsilon * 0.99, 0.05)
""",
    )

    INVALID = (
        """
class Generator:
    def __init__(self, config):
        self.config = config
        self.dp = LaplaceMechanism(epsilon=self.config.epsilon)
    def adjust(self, risk):
        if risk > self.config.max_risk:
            self.config.epsilon = max(self.config.epsilon * 0.8, 0.1)  # <-
""",
        """
class Generator:
    def __init__(self, config):
        self.config = config
        self._build()
    def _build(self):
        self.dp = LaplaceMechanism(epsilon=self.config.epsilon)
    def tighten(self):
        self.config.epsilon = self.config.epsilon / 2  # <-
""",
        """
class Synth:
    def __init__(self, epsilon):
        self.epsilon = epsilon
        self.mechanism = GaussianMechanism(self.epsilon, 1e-5)
    def apply_constraints(self, constraints):
        if 'epsilon' in constraints:
            self.epsilon = constraints['epsilon']  # <-
""",
        """
class Pipeline:
    def __init__(self, settings):
        self.settings = settings
        self.accountant = BudgetAccountant(total=self.settings.epsilon)
    def retry(self):
        self.settings.epsilon *= 0.5  # <-
""",
    )
