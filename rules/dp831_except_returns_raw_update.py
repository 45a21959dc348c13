"""DP831: a `try` returns the privatized update and its `except` path returns the raw value it was made from."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words of the name of a call that privatizes its input
_PRIV_WORDS = frozenset({"dp", "ldp", "privatize", "privatise", "privatized", "perturb", "sanitize", "sanitise",
                         "noise", "noisy", "noised", "obfuscate", "randomize", "randomise", "laplace",
                         "gaussian", "mechanism"})


def _privatizing(call: cst.Call) -> bool:
    name = dotted(call.func) or call_name(call)
    return bool(words(name.split(".")[-1]) & _PRIV_WORDS)


def _head(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The released value of a ``return``: the first element of a tuple (Flower's ``fit``), else itself."""
    if isinstance(expr, cst.Tuple) and expr.elements:
        return expr.elements[0].value
    return expr


class ExceptReturnsRawUpdate(Rule):
    id = "DP831"
    name = "except-returns-raw-update"
    category = "general"
    severity = "error"
    summary = "the `try` path returns the privatized update; the `except` path returns the raw value instead"
    rationale = (
        "A federated client (Flower's `fit`, a `local_update`) or a release function that privatizes its "
        "result in a `try` (`dp_params = apply_dp(params)`, `return add_noise(w), n, {}`) and, when anything "
        "in it fails, catches the error and returns the value the privatizer was given (`self.get_parameters()`, "
        "the raw weights) sends the exact, un-noised update to the server under the privacy claim; whether the "
        "fallback fires can depend on the data, so even the choice leaks. Reported: a `return` in a `try` body "
        "whose value (or first tuple element) is a privatizing call or a name bound from one, and a `return` in "
        "one of its `except` handlers whose value (or first element) is the privatizer's input, or the same "
        "expression that input was computed from. Not reported: handlers that re-raise, return nothing or an "
        "empty value, or return a privatized value. Fix: let the error propagate, or return a privatized value "
        "(or nothing) from the handler too."
    )
    TRIGGERS = ("except",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``try`` with a handler, holding a ``return``."""
        return any(n.handlers and any(isinstance(s, ast.Return) for h in n.handlers for s in ast.walk(h))
                   for n in facts.nodes(ast.Try))  # type: ignore[attr-defined]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        binds: dict[str, list[cst.BaseExpression]] = {}
        for a in walk(node.body, into_scopes=False):
            if isinstance(a, cst.Assign) and len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name):
                binds.setdefault(a.targets[0].target.value, []).append(a.value)
        for tr in walk(node.body, into_scopes=False):
            if not isinstance(tr, cst.Try) or not tr.handlers:
                continue
            raw: list[cst.BaseExpression] = []
            for ret in walk(tr.body, into_scopes=False):
                if isinstance(ret, cst.Return):
                    raw += self._raw_inputs(_head(ret.value), binds)
            if not raw:
                continue
            for handler in tr.handlers:
                for ret in walk(handler.body, into_scopes=False):
                    if not isinstance(ret, cst.Return):
                        continue
                    head = _head(ret.value)
                    if head is None:
                        continue
                    shapes = [head] + (binds.get(head.value, []) if isinstance(head, cst.Name) else [])
                    if any(s.deep_equals(r) for s in shapes for r in raw):
                        self.report(
                            ret,
                            "the `except` path returns the raw value the `try` path privatizes before returning "
                            "it: any failure releases the exact update; re-raise, or return a privatized value",
                        )

    @staticmethod
    def _raw_inputs(head: cst.BaseExpression | None,
                    binds: dict[str, list[cst.BaseExpression]]) -> list[cst.BaseExpression]:
        if head is None:
            return []
        calls = [head] if isinstance(head, cst.Call) else (
            binds.get(head.value, []) if isinstance(head, cst.Name) else [])
        out: list[cst.BaseExpression] = []
        for call in calls:
            if not (isinstance(call, cst.Call) and _privatizing(call)) or not call.args:
                continue
            arg = call.args[0].value
            if isinstance(arg, (cst.Name, cst.Attribute, cst.Call)):
                out.append(arg)
                if isinstance(arg, cst.Name):
                    out += [v for v in binds.get(arg.value, []) if isinstance(v, (cst.Call, cst.Attribute))]
        return out

    VALID = (
        # twin: the handler re-raises
        """
class DPClient:
    def fit(self, parameters, config):
        try:
            self.set_parameters(parameters)
            self.train_one_round()
            weights = self.get_parameters()
            private = add_gaussian_noise(weights, sigma=1.2)
            return private, self.n, {}
        except RuntimeError as err:
            print(err)
            raise
""",
        # twin: the handler returns the global parameters it was sent (no private information)
        """
class DPClient:
    def fit(self, parameters, config):
        try:
            self.set_parameters(parameters)
            self.train_one_round()
            weights = self.get_parameters()
            private = add_gaussian_noise(weights, sigma=1.2)
            return private, self.n, {}
        except RuntimeError:
            return parameters, 0, {}
""",
        # ordinary ML: a fallback to a default preprocessing path
        """
def load_batch(path):
    try:
        img = read_image(path)
        return augment_noise(img), 1
    except OSError:
        return None, 0
""",
        # twin: the handler returns a fresh privatized value
        """
def local_round(model, loader, clip, sigma):
    try:
        delta = train_delta(model, loader)
        return privatize_update(delta, clip, sigma)
    except ValueError:
        return privatize_update(zeros_like(delta), clip, sigma)
""",
        # twin: the handler returns nothing
        """
def release(values, eps):
    try:
        total = exact_sum(values)
        return laplace_mechanism(total, eps)
    except TypeError:
        return None
""",
    )
    INVALID = (
        """
class DPClient:
    def fit(self, parameters, config):
        try:
            self.set_parameters(parameters)
            self.train_one_round()
            weights = self.get_parameters()
            private = add_gaussian_noise(weights, sigma=1.2)
            return private, self.n, {}
        except RuntimeError as err:
            print(err)
            backup = self.get_parameters()
            return backup, self.n, {}  # <-
""",
        """
def local_round(model, loader, clip, sigma):
    try:
        delta = train_delta(model, loader)
        return privatize_update(delta, clip, sigma)
    except ValueError:
        return delta  # <-
""",
        """
def release(values, eps):
    try:
        return laplace_mechanism(exact_sum(values), eps)
    except TypeError:
        return exact_sum(values)  # <-
""",
        """
class Client:
    def fit(self, parameters, config):
        try:
            self.train(parameters)
            return self.apply_dp(self.model.get_weights()), self.size, {}
        except Exception:
            logger.warning("dp failed")
            return self.model.get_weights(), self.size, {}  # <-
""",
    )
