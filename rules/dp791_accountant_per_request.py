"""DP791: a web request handler creates a fresh privacy-budget accountant on every request, so the budget
never runs out across requests."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, param_names, walk, words
from dpcheck.rule import Rule

#: words of a class that holds the privacy budget spent so far
_ACCOUNT_WORDS = frozenset({"accountant", "odometer", "budget", "ledger"})
#: words that make such a class something else (a form, a serializer, a schema, an exception)
_NOT_ACCOUNT = frozenset({"error", "exception", "exceeded", "depleted", "form", "serializer", "schema", "view",
                          "response", "request", "config", "warning", "exhausted"})
#: decorators of a request handler (Flask, FastAPI, Django, DRF)
_HANDLER_DECORATORS = frozenset({"route", "get", "post", "put", "patch", "delete", "api_view", "csrf_exempt",
                                 "require_POST", "require_GET", "require_http_methods", "login_required",
                                 "websocket", "api_route"})
_REQUEST_PARAMS = frozenset({"request", "req"})
#: calls that persist an object beyond the request
_PERSIST = frozenset({"add", "save", "set", "put", "commit", "setdefault", "store", "persist", "merge"})


def _accountant_ctor(call: cst.Call) -> str | None:
    name = call_name(call)
    if not name or not name[0].isupper():
        return None
    pieces = words(name)
    if pieces & _ACCOUNT_WORDS and not pieces & _NOT_ACCOUNT:
        return name
    return None


def _is_handler(fn: cst.FunctionDef) -> bool:
    for dec in fn.decorators:
        target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        text = dotted(target) or ""
        last = text.rsplit(".", 1)[-1]
        if last in _HANDLER_DECORATORS and (last not in {"get", "post", "put", "patch", "delete"} or "." in text):
            return True
    params = param_names(fn)
    if params and params[0] == "self":
        params = params[1:]
    return bool(params) and params[0] in _REQUEST_PARAMS


class AccountantPerRequest(Rule):
    id = "DP791"
    name = "accountant-per-request"
    category = "general"
    severity = "error"
    summary = ("a request handler builds a new privacy accountant / budget on every request: each request starts "
               "with the full budget, so the total privacy loss across requests is unbounded")
    rationale = (
        "A DP query service must charge every answer to one budget that outlives the request: the guarantee is "
        "about everything an analyst can learn, over all the queries they send. When a Flask/FastAPI route or a "
        "Django view constructs its accountant inside the handler (`acc = BudgetAccountant(epsilon=5.5)`, "
        "`odometer = PrivacyOdometer(total)`) and spends from it, every request sees a fresh, full budget: a "
        "client can repeat the query until the noise averages out, and the budget check never fires. Reported: "
        "a constructor named for an accountant, odometer or budget called in a request handler (decorated as a "
        "route or view, or taking `request` first), whose result stays local (not stored in the database, the "
        "session, a cache or a global, and not created only when none exists yet). Fix: create the accountant "
        "once per dataset or per analyst (module level, database row, session) and load it in the handler."
    )
    TRIGGERS = ("Accountant", "Odometer", "Budget", "Ledger")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a call of a capitalised name with an accountant word inside a function."""
        for call in facts.calls:
            name = call.func.attr if isinstance(call.func, ast.Attribute) else (
                call.func.id if isinstance(call.func, ast.Name) else "")
            if name[:1].isupper() and words(name) & _ACCOUNT_WORDS and not words(name) & _NOT_ACCOUNT \
                    and facts.enclosing_function(call) is not None:
                return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not _is_handler(node):
            return
        body = list(walk(node.body, into_scopes=False))
        globals_ = {n.name.value for g in body if isinstance(g, cst.Global) for n in g.names}
        # names created only when missing: ``if not budget: budget = PrivacyBudget(...)``
        lazy: set[int] = set()
        for sub in body:
            if isinstance(sub, cst.If):
                test_names = {n.value for n in walk(sub.test) if isinstance(n, cst.Name)}
                for inner in walk(sub.body):
                    if isinstance(inner, cst.Assign) and any(
                            isinstance(t.target, cst.Name) and t.target.value in test_names for t in inner.targets):
                        lazy.add(id(inner.value))
        persisted: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Call) and call_name(sub) in _PERSIST:
                persisted |= {n.value for a in sub.args for n in walk(a.value) if isinstance(n, cst.Name)}
        for sub in body:
            if not isinstance(sub, cst.Assign) or not isinstance(sub.value, cst.Call):
                continue
            ctor = _accountant_ctor(sub.value)
            if ctor is None or id(sub.value) in lazy:
                continue
            targets = [t.target for t in sub.targets]
            if not all(isinstance(t, cst.Name) for t in targets):
                continue  # stored on an object, in a dict or the session: may outlive the request
            names = {t.value for t in targets}  # type: ignore[union-attr]
            if names & globals_ or names & persisted:
                continue
            uses = sum(1 for n in body if isinstance(n, cst.Name) and n.value in names)
            if uses <= len(targets):
                continue
            self.report(
                sub.value,
                f"`{ctor}(...)` is created inside the request handler `{node.name.value}`: every request starts "
                "with a fresh budget, so repeated requests are never composed; keep one accountant per dataset "
                "or analyst outside the handler",
            )

    VALID = (
        # twin: one accountant for the service, loaded by the handler
        """
import diffprivlib as dp
from django.http import JsonResponse
ACCOUNTANT = dp.BudgetAccountant(epsilon=5.0, delta=0)
def histogram_view(request):
    data = load_records()
    hist, edges = dp.tools.histogram(data, bins=10, range=(0, 100), epsilon=0.5, accountant=ACCOUNTANT)
    return JsonResponse({"hist": hist.tolist()})
""",
        # twin: the budget row is created once and stored in the database
        """
from flask import Flask, jsonify
app = Flask(__name__)
@app.route("/budget/<user>")
def budget(user):
    row = PrivacyBudget.query.filter_by(user=user).first()
    if row is None:
        row = PrivacyBudget(user=user, total=3.0)
        db.session.add(row)
        db.session.commit()
    return jsonify({"left": row.total - row.spent})
""",
        # a script (not a handler) making one accountant for one run
        """
import diffprivlib as dp
def run_experiment(data, epsilon):
    acc = dp.BudgetAccountant(epsilon=epsilon)
    model = dp.models.GaussianNB(epsilon=epsilon, accountant=acc, bounds=(0, 1))
    model.fit(data.X, data.y)
    return model, acc.total()
""",
        # twin: the accountant is kept in the session between requests
        """
from diffprivlib.accountant import BudgetAccountant
def query(request):
    acc = request.session.get("acc")
    spent = acc.spent if acc else 0
    return spent
""",
        # ordinary web code: a Budget model in a finance app, no privacy
        """
from django.http import JsonResponse
def create_budget(request):
    total = float(request.POST["total"])
    b = Budget(owner=request.user, total=total)
    b.save()
    return JsonResponse({"id": b.id})
""",
    )

    INVALID = (
        # Django view: a new diffprivlib accountant per POST
        """
import diffprivlib as dp
from diffprivlib.accountant import BudgetAccountant
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
@csrf_exempt
def scatter_view(request):
    values = load_records()["age"].tolist()
    acc = dp.BudgetAccountant(epsilon=3.0, delta=0)  # <-
    accountant = BudgetAccountant.load_default(acc)
    noisy = release(values, epsilon=1, accountant=accountant)
    return JsonResponse({"y": noisy})
""",
        # Flask route with a home-made odometer
        """
import numpy as np
from flask import Flask, jsonify, request
app = Flask(__name__)
@app.route("/count", methods=["POST"])
def count():
    eps = float(request.json["epsilon"])
    odometer = PrivacyOdometer(total_epsilon=1.0)  # <-
    odometer.spend(eps)
    n = len(load_rows()) + np.random.laplace(0, 1 / eps)
    return jsonify({"count": n})
""",
        # FastAPI endpoint
        """
import numpy as np
from fastapi import FastAPI
api = FastAPI()
@api.get("/mean")
def dp_mean(column: str, epsilon: float):
    budget = PrivacyBudgetTracker(limit=2.0)  # <-
    budget.charge(epsilon)
    x = np.clip(load_column(column), 0, 100)
    return {"mean": x.mean() + np.random.laplace(0, 100 / (len(x) * epsilon))}
""",
        # class-based view method taking the request
        """
import diffprivlib as dp
class StatsView:
    def post(self, request):
        acct = dp.accountant.BudgetAccountant(epsilon=2.0)  # <-
        m = dp.tools.mean(load_column("bmi"), epsilon=0.5, bounds=(10, 60), accountant=acct)
        return {"mean": m, "left": acct.remaining()}
""",
    )
