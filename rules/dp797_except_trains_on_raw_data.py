"""DP797: a `try` uses the privatized data and its `except` path makes the same call on the raw data."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, target_names, value_refs, walk, words
from dpcheck.rule import Rule

#: pieces of the name of a call that privatizes its input
_PRIVATIZING = ("privati", "perturb", "anonymi", "sanitiz", "sanitis", "obfuscat", "randomiz", "randomis",
                "noisy", "add_noise", "ldp", "laplace", "gaussian_mech", "mechanism", "with_noise", "dp_")
#: words of a name holding privatized data
_PRIVATE_WORDS = frozenset({"private", "priv", "noisy", "perturbed", "privatized", "privatised", "sanitized",
                            "sanitised", "anonymized", "anonymised", "dp", "ldp", "noised", "obfuscated"})


def _privatizing_call(expr: cst.BaseExpression) -> cst.Call | None:
    for n in walk(expr):
        if isinstance(n, cst.Call):
            low = (dotted(n.func) or call_name(n)).lower()
            if any(p in low for p in _PRIVATIZING):
                return n
    return None


class ExceptTrainsOnRawData(Rule):
    id = "DP797"
    name = "except-trains-on-raw-data"
    category = "general"
    severity = "error"
    summary = "the `except` path repeats the call made on the privatized data with the raw data instead"
    rationale = (
        "Code that trains, fits or publishes on privatized data (`model.train(private_df)`) and, when that "
        "fails, catches the error and makes the same call on the raw data (`model.train(df)`) silently "
        "releases a non-private model or result under the privacy claim; whether the fallback fires depends "
        "on the data (a perturbed column with an unexpected type, an empty category), so even the choice "
        "leaks. Reported: inside one function, a name bound from a privatizing call on X (`perturb`, "
        "`privatize`, `add_noise`, an LDP mechanism) or named as privatized data, passed to a call in a `try` "
        "body, and the same callee called in an `except` handler with X in its place. Not reported: a "
        "handler that re-raises, returns nothing or retries on privatized data, and code with no privatizing "
        "step. Fix: let the error propagate or retry with privatized data; never fall back to the raw data."
    )
    TRIGGERS = ("except",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``try`` with a handler."""
        return any(n.handlers for n in facts.nodes(ast.Try))  # type: ignore[attr-defined]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # privatized name -> the raw names it was computed from
        sources: dict[str, set[str]] = {}
        for a in walk(node.body, into_scopes=False):
            if not isinstance(a, cst.Assign):
                continue
            names: set[str] = set()
            for t in a.targets:
                names |= target_names(t.target)
            call = _privatizing_call(a.value)
            for name in names:
                if call is not None:
                    raw = set()
                    for arg in call.args:
                        raw |= {r for r in value_refs(arg.value) if r not in ("self", "cls") and r != name}
                    if raw:
                        sources.setdefault(name, set()).update(raw)
                elif words(name) & _PRIVATE_WORDS:
                    raw = {r for r in value_refs(a.value) if r not in ("self", "cls") and r != name
                           and not words(r) & _PRIVATE_WORDS}
                    if raw:
                        sources.setdefault(name, set()).update(raw)
        if not sources:
            return
        for tr in walk(node.body, into_scopes=False):
            if not isinstance(tr, cst.Try):
                continue
            uses: list[tuple[str, int, str, set[str]]] = []  # callee, position, private name, raw names
            for call in walk(tr.body, into_scopes=False):
                if not isinstance(call, cst.Call):
                    continue
                callee = dotted(call.func)
                if callee is None:
                    continue
                for i, arg in enumerate(call.args):
                    if isinstance(arg.value, cst.Name) and arg.value.value in sources:
                        uses.append((callee, i, arg.value.value, sources[arg.value.value]))
            if not uses:
                continue
            for handler in tr.handlers:
                for call in walk(handler.body, into_scopes=False):
                    if not isinstance(call, cst.Call):
                        continue
                    callee = dotted(call.func)
                    for used_callee, i, private, raw in uses:
                        if callee != used_callee or i >= len(call.args):
                            continue
                        arg = call.args[i].value
                        if isinstance(arg, cst.Name) and arg.value in raw:
                            self.report(call, f"on error `{callee}` is called with the raw `{arg.value}` instead "
                                              f"of the privatized `{private}`: the fallback releases a "
                                              "non-private result under the privacy claim; re-raise instead")
                            break

    VALID = (
        # twin: the error propagates
        """
def train_private(model, ldp, df):
    private_df = ldp.perturb_interactions(df)
    try:
        return model.train(private_df)
    except ValueError as err:
        raise RuntimeError("private training failed") from err
""",
        # twin: retry on the privatized data with another optimizer
        """
def fit_with_noise(model, x, epsilon):
    noisy_x = add_noise(x, epsilon)
    try:
        model.fit(noisy_x, solver="lbfgs")
    except RuntimeError:
        model.fit(noisy_x, solver="sgd")
    return model
""",
        # twin: the handler logs and returns nothing
        """
def publish(stats, epsilon, writer, log):
    try:
        noisy = laplace_mechanism(stats, epsilon)
        writer.write(noisy)
    except (TypeError, ValueError):
        log.error("release skipped")
""",
        # twin: the fallback is the privatized data in another format
        """
def fit_dp(clf, X, y, sigma, rng):
    X_priv = X + sigma * rng.standard_normal(X.shape)
    try:
        clf.fit(X_priv, y)
    except Exception:
        clf.fit(X_priv.astype("float64"), y)
    return clf
""",
        # ordinary ML: fall back to the un-augmented batch when augmentation breaks
        """
def train_step(model, augment, batch):
    aug = augment(batch)
    try:
        return model.train_on_batch(aug)
    except ValueError:
        return model.train_on_batch(batch)
""",
    )

    INVALID = (
        # a recommender wrapper falls back to the raw interactions
        """
class PrivacyAwareModel:
    def train(self, df, **kwargs):
        private_df = self.ldp.perturb_user_item_interactions(df)
        try:
            return self.base_model.train(private_df, **kwargs)
        except Exception:
            return self.base_model.train(df, **kwargs)  # <-
""",
        # the privatizing step inside the try, published results on failure
        """
def publish(stats, epsilon, writer):
    try:
        noisy = laplace_mechanism(stats, epsilon)
        writer.write(noisy)
    except (TypeError, ValueError):
        writer.write(stats)  # <-
""",
        # named privatized data, fitting a sklearn model
        """
def fit_dp(clf, X, y, sigma):
    X_priv = X + sigma * rng.standard_normal(X.shape)
    try:
        clf.fit(X_priv, y)
    except Exception:
        clf.fit(X, y)  # <-
    return clf
""",
        # a federated client uploads the raw update when the LDP step fails
        """
class Client:
    def upload(self, server, update):
        try:
            ldp_update = self.ldp.privatize(update, self.epsilon)
            server.receive(self.cid, ldp_update)
        except RuntimeError:
            server.receive(self.cid, update)  # <-
""",
    )
