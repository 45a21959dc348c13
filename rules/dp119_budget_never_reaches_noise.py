"""DP119: the budget or the noise scale the code computes never reaches the noise: a calibrated scale
assigned and never read, or an ε sweep whose loop variable is only printed."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, last_name, number, param_names, target_nodes, walk, words
from dpcheck.analysis.astfacts import AstFacts
from dpcheck.rule import Rule
from dpcheck.analysis import nonrelease

_BUDGET = frozenset({"epsilon", "eps", "budget", "rho", "epsilons"})
_NUMERIC = frozenset({"norm", "adam", "optimizer", "optim", "tol", "tolerance", "machine", "numerical", "stability",
                      "small", "finfo", "ln", "bn", "layer"})
#: a name for a noise calibration (a scale, a multiplier, a share of the budget)
_CALIBRATION = frozenset({"scale", "sigma", "std", "stddev", "multiplier", "lambda", "lam", "beta", "b",
                          "epsilon", "eps", "budget", "rho", "sens", "sensitivity"})
#: a name for the noise level itself (a never-read budget share only leaves budget unspent)
_NOISE_LEVEL = frozenset({"scale", "sigma", "std", "stddev", "multiplier", "lambda", "lam", "beta", "b"})
_DRAWS = PURE_DRAWS | {"cauchy", "rvs", "randomise", "randomize", "add_noise", "normal", "laplace"}
#: calls whose arguments only report a value
_REPORT = frozenset({"print", "info", "debug", "warning", "warn", "log", "write", "append", "format", "add_scalar",
                     "log_metric", "log_metrics", "set_description", "set_postfix", "extend", "tqdm", "pprint",
                     "savefig", "title", "xlabel", "ylabel", "plot", "label", "legend", "echo", "writerow"})
#: keyword arguments of a private run that a swept budget should reach
_PRIVACY_KEYWORDS = frozenset({"noise_multiplier", "sigma", "epsilon", "eps", "target_epsilon", "noise_scale",
                               "noise", "privacy_budget", "budget"})


def _budget_name(name: str | None) -> bool:
    if not name:
        return False
    pieces = words(name)
    return bool(pieces & _BUDGET) and not pieces & _NUMERIC


def _is_store(node: cst.Name, parent_of) -> bool:
    """A binding, or no variable at all (an attribute's name, a keyword)."""
    cur: cst.CSTNode = node
    parent = parent_of(cur)
    if isinstance(parent, cst.Attribute) and parent.attr is node or isinstance(parent, cst.Arg) \
            and parent.keyword is node:
        return True
    while isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
        cur, parent = parent, parent_of(parent)
    if isinstance(parent, cst.AssignTarget) and parent.target is cur:
        return True
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.target is cur:
        return True
    if isinstance(parent, cst.AnnAssign) and parent.target is cur:
        return True
    return isinstance(parent, (cst.AsName, cst.Param, cst.ImportAlias, cst.FunctionDef, cst.ClassDef))


_GAUSS_DRAWS = frozenset({"normal", "gauss", "randn", "randn_like", "standard_normal", "Normal", "normal_",
                          "random_normal", "gaussian", "gaussian_noise", "normalvariate"})


def _gaussian_calibration(value: cst.CSTNode) -> bool:
    """``sqrt(2 * log(1.25 / delta))``: the value is a Gaussian-mechanism σ."""
    return any(isinstance(n, cst.Call) and call_name(n) == "log" and any(
        isinstance(m, (cst.Name, cst.Attribute)) and "delta" in words(last_name(m) or "") for m in walk(n))
        for n in walk(value))


def _draws(node: cst.CSTNode) -> list[cst.Call]:
    return [n for n in walk(node) if isinstance(n, cst.Call) and call_name(n) in _DRAWS]


class BudgetNeverReachesNoise(Rule):
    id = "DP119"
    name = "budget-never-reaches-noise"
    category = "general"
    severity = "error"
    summary = ("the budget or noise scale the code computes never reaches the noise: a calibrated scale assigned "
               "and never read, or an ε sweep whose loop variable is only printed")
    rationale = (
        "Noise protects at the level it is drawn with, not at the level the code computes. Three shapes "
        "compute the right calibration and then drop it. (1) In a function that draws noise, a scale "
        "or σ is computed from ε (`scale = 2 * theta / epsilon * smooth_sens`, "
        "`sigma = sens * sqrt(2 * log(1.25 / delta)) / eps`) and never "
        "read: the draw uses another value (`cauchy.rvs(scale=smooth_sens)`, the full ε), so the "
        "noise does not depend on the budget the function is given. (2) A sweep over privacy budgets "
        "(`for eps in [10, 1, 0.1]:`) whose body runs a private mechanism (a noise draw, "
        "`make_private(noise_multiplier=0.5)`) but reads the loop variable only to print, log or "
        "record the results: every run has the same noise, and the numbers reported for each ε are all "
        "for one, unrelated ε. (3) A budget share computed (`local_eps = eps / n_coefs`) while a loop of "
        "releases is handed the whole budget (`epsilon=eps`, or a copy `global_eps = eps`): every "
        "iteration spends the full ε. Not reported: a name read anywhere (also in a nested function, or by a "
        "module function when the loop is at module level), functions using `locals()`, a sweep whose "
        "body draws no noise and runs no private training, an `eps` named for a numerical constant, "
        "code with no DP context. Fix: draw with the computed scale / share, or pass the swept ε to "
        "the mechanism (`make_private_with_epsilon(target_epsilon=eps, …)`)."
    )
    TRIGGERS = ("eps", "budget", "rho")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """Every shape needs a noise draw (an unread scale in a function that draws) or a loop (a
        sweep, or a share computed before a loop of releases)."""
        return facts.calls_any(_DRAWS) or bool(facts.nodes(ast.For, ast.AsyncFor, ast.While))

    VALID = (
        # (g37-4) the enumerate counter is no budget; a counter that indexes answers calibrated per budget
        """
import numpy as np
def sweep(graph, budgets, perturb, seed):
    out = []
    for k, epsilon in enumerate(budgets, 1):
        print(f"budget {k}/{len(budgets)}: {epsilon}")
        out.append(perturb(graph, epsilon, seed=seed, noise=np.random.laplace))
    return out
""",
        """
import numpy as np
def first_good(answers_by_eps, eps_list, data, thresh, sens, test_eps):
    for t, eps in enumerate(eps_list):
        if answers_by_eps[t](data) + np.random.laplace(scale=sens / test_eps) <= thresh:
            return t
    return -1
""",
        # a sweep over result folders: the budget only fills a path template, no private run inside
        """
import os, shutil
def sort_results(src, template, mechanism):
    for name in os.listdir(src):
        for epsilon in ["0.1", "1", "5"]:
            if name.endswith(f"_{epsilon}.csv"):
                dest = template.format(mechanism=mechanism, epsilon=epsilon)
                shutil.move(os.path.join(src, name), os.path.join(dest, name))
""",
        # a hyperparameter share left unspent (conservative), the release uses its own share
        "import numpy as np\ndef const_ssp(X, y, epsilon, gamma):\n    epsilon_hyper = gamma * epsilon\n"
        "    eps_release = (1 - gamma) * epsilon\n    return X.T @ y + np.random.laplace(0, 1 / eps_release, X.shape[1])\n",
        # a σ for the Gaussian variant left next to the Laplace mechanism the function uses
        "import math, numpy as np\ndef aggregate(v, epsilon, delta, clip):\n"
        "    sigma = (2 * clip / epsilon) * math.sqrt(2 * math.log(1.25 / delta))\n"
        "    return v + np.random.laplace(0, 2 * clip / epsilon, v.shape)\n",
        # the swept ε reaches the experiment through a call inside the append
        "import numpy as np\ndef run(eps):\n    return 3.0 + np.random.laplace(0, 1 / eps)\n"
        "def sweep(epsilon):\n    out = []\n    for eps in (epsilon, 2 * epsilon):\n"
        "        noisy = np.random.laplace(0, 1.0)\n        out.append(run(eps))\n    return out, noisy\n",
        "import numpy as np\ndef answer_all(answers, epsilon, sens):\n    eps_per_query = epsilon / len(answers)\n"
        "    return [a + np.random.laplace(0, sens / eps_per_query) for a in answers]\n",
        "def stream(counts, epsilon, T, release):\n    eps_round = epsilon / T\n    t = 0\n    while t < T:\n"
        "        release(counts[t], epsilon=eps_round)\n        t += 1\n",
        "def randomise_coefficients(coefs, epsilon, sensitivity, make_mech):\n"
        "    local_epsilon = epsilon / len(coefs)\n    out = []\n    for c in coefs:\n"
        "        out.append(make_mech(epsilon=local_epsilon, sensitivity=sensitivity).randomise(c))\n    return out\n",
        "import numpy as np\ndef noisy_hist(h, epsilon, sens):\n    scale = sens / epsilon\n"
        "    return h + np.random.laplace(0, scale, len(h))\n",
        "import numpy as np\nfor eps in [0.1, 1.0, 10.0]:\n    noisy = 5 + np.random.laplace(0, 1 / eps)\n"
        "    print(eps, noisy)\n",
        # the swept ε reaches the mechanism through a module function that reads the global
        "import numpy as np\ndef release(x):\n    return x + np.random.laplace(0, 1 / epsilon)\n"
        "for epsilon in [0.5, 1.0]:\n    print(epsilon, release(3.0))\n",
        # computed and handed on through locals()
        "import numpy as np\ndef mech(x, eps):\n    scale = 1 / eps\n    return draw(x, **locals())\n"
        "def draw(x, scale, **_):\n    return x + np.random.laplace(0, scale)\n",
        # a sweep that draws no noise (plotting the bound)
        "import math\nfor eps in [0.1, 1.0]:\n    print(eps, math.exp(eps))\n",
    )
    INVALID = (
        # (g37-4) twin of the enumerate sweeps: counter and budget both only printed
        """
import numpy as np
def passes(answer, eps_list, data, thresh, sens, test_eps):
    hits = []
    for t, eps in enumerate(eps_list):  # <-
        print(t, eps)
        hits.append(answer(data) + np.random.laplace(scale=sens / test_eps) <= thresh)
    return hits
""",
        # twin: the same folder template, but the run inside draws its noise with one fixed scale
        """
import os
import numpy as np
def run_all(counts, template, mechanism, sensitivity):
    for epsilon in [0.1, 1.0, 5.0]:  # <-
        noisy = counts + np.random.laplace(0, sensitivity, len(counts))
        np.save(os.path.join(template.format(mechanism=mechanism, epsilon=epsilon), "noisy.npy"), noisy)
""",
        # the share printed, every query drawn with the whole ε
        """
import numpy as np
def answer_all(answers, epsilon, sens):
    eps_per_query = epsilon / len(answers)
    print("budget per query", eps_per_query)
    noisy = []
    for a in answers:
        noisy.append(a + np.random.laplace(0, sens / epsilon))  # <-
    return noisy
""",
        # a while loop of releases with keyword eps
        """
def stream(counts, epsilon, T, release):
    eps_round = epsilon / T
    t = 0
    log = [eps_round]
    while t < T:
        release(counts[t], epsilon=epsilon)  # <-
        t += 1
    return log
""",
        # a per-coefficient share computed, the loop's mechanisms built with the whole budget
        """
def randomise_coefficients(coefs, epsilon, sensitivity, make_mech):
    global_epsilon = epsilon
    local_epsilon = epsilon / len(coefs)
    out = [make_mech(epsilon=local_epsilon, sensitivity=sensitivity).randomise(coefs[0])]
    for c in coefs[1:]:
        mech = make_mech(epsilon=global_epsilon, sensitivity=sensitivity)  # <-
        out.append(mech.randomise(c))
    return out
""",
        # a Cauchy scale computed, the draw uses another value
        """
from scipy.stats import cauchy
def noisy_degree_histogram(hist, epsilon, smooth_sens, theta):
    scale = 2 * theta / epsilon * smooth_sens  # <-
    return hist + cauchy.rvs(0, scale=smooth_sens, size=len(hist))
""",
        # a budget share computed, every query drawn with the full ε
        """
import numpy as np
def answer_queries(values, epsilon, sensitivity):
    per_query_scale = sensitivity * len(values) / epsilon  # <-
    return [v + np.random.laplace(0, sensitivity / epsilon) for v in values]
""",
        # torch: σ computed from (ε, δ), the noise uses a fixed std
        """
import math, torch
def privatize(update, eps, delta, clip):
    sigma = clip * math.sqrt(2 * math.log(1.25 / delta)) / eps  # <-
    return update + torch.normal(0.0, 1.0, update.shape)
""",
        # an ε sweep around Opacus that never passes ε
        """
from opacus import PrivacyEngine
results = {}
for target_eps in [8.0, 3.0, 1.0]:  # <-
    engine = PrivacyEngine()
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=0.5, max_grad_norm=1.0)
    results[target_eps] = train(model, opt, loader)
""",
        # a sweep inside a function, the loop variable only logged
        """
import numpy as np
def experiment(data, epsilon, log):
    for eps in (epsilon / 4, epsilon / 2, epsilon):  # <-
        noisy_mean = data.mean() + np.random.laplace(0, 1.0 / len(data))
        log.info(f"eps={eps} error={abs(noisy_mean - data.mean())}")
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._share_unused_in_loop(node)
        if not _draws(node):
            return
        if any(isinstance(n, cst.Call) and call_name(n) in ("locals", "vars", "eval", "exec") for n in walk(node)):
            return
        if any(isinstance(n, (cst.Global, cst.Nonlocal)) for n in walk(node, into_scopes=False)):
            return
        fa = self.ctx.analysis
        params = set(param_names(node))
        for stmt in walk(node, into_scopes=False):
            if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
                continue
            target = stmt.targets[0].target
            if not isinstance(target, cst.Name) or target.value.startswith("_") or target.value in params:
                continue
            if not words(target.value) & _NOISE_LEVEL or words(target.value) & _NUMERIC:
                continue  # an unspent budget share is conservative; an unused noise level is the bug
            value = stmt.value
            if not isinstance(value, (cst.BinaryOperation, cst.Call)) or number(value) is not None:
                continue
            budget = next((last_name(n) for n in walk(value) if isinstance(n, (cst.Name, cst.Attribute))
                           and _budget_name(last_name(n))), None)
            if budget is None:
                continue
            if any(isinstance(n, cst.Name) and n.value == target.value and not _is_store(n, fa.parent)
                   for n in walk(node)):
                continue
            if _gaussian_calibration(value) and not any(call_name(d) in _GAUSS_DRAWS for d in _draws(node)):
                continue  # a σ for the Gaussian variant next to Laplace draws: another mechanism's dead setting
            self.report(stmt, f"`{target.value}` is computed from `{budget}` but never read: the noise this "
                              f"function draws does not use it, so it is not calibrated to the budget computed "
                              f"here")

    def _share_unused_in_loop(self, fn: cst.FunctionDef) -> None:
        """``local_eps = eps / k`` computed, then a loop of releases handed the whole ``eps`` (or a copy of it)."""
        params = set(param_names(fn))
        shares: dict[str, str] = {}
        share_line: dict[str, int] = {}
        aliases: dict[str, str] = {}
        for stmt in walk(fn, into_scopes=False):
            if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0].target,
                                                                                              cst.Name):
                continue
            target, value = stmt.targets[0].target.value, stmt.value
            if isinstance(value, cst.Name) and value.value in params and _budget_name(value.value):
                aliases[target] = value.value
            elif isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide) \
                    and isinstance(value.left, cst.Name) and value.left.value in params \
                    and _budget_name(value.left.value) and _budget_name(target) and number(value.right) is None \
                    and not self.ctx.analysis.enclosing_loops(stmt):
                shares[value.left.value] = target
                share_line[target] = self.ctx.analysis.line_of(stmt)
        if not shares:
            return
        whole = {a: b for a, b in aliases.items() if b in shares} | {b: b for b in shares}
        for loop in walk(fn, into_scopes=False):
            if not isinstance(loop, (cst.For, cst.While)):
                continue
            if any(self.ctx.analysis.line_of(loop) < line for line in share_line.values()):
                continue  # the share is computed after this loop (for a later step)
            read = {n.value for n in walk(loop) if isinstance(n, cst.Name)}
            if read & set(shares.values()):
                continue  # the loop spends the share too: the whole budget there is another step's (or parallel)
            for call in walk(loop.body):
                if not isinstance(call, cst.Call):
                    continue
                used = next((a.value.value for a in call.args if a.keyword is not None and _budget_name(
                    a.keyword.value) and isinstance(a.value, cst.Name) and a.value.value in whole), None)
                if used is None and call_name(call) in _DRAWS:
                    used = next((n.value for a in call.args for n in walk(a.value)
                                 if isinstance(n, cst.Name) and n.value in whole), None)
                if used is None:
                    continue
                share = shares[whole[used]]
                self.report(call, f"this release inside a loop is given the whole budget `{used}`, although "
                                  f"`{share}` was computed as its share: every iteration spends the full ε, so the "
                                  f"total is many times the budget; pass `{share}`")
                return

    def visit_For(self, node: cst.For) -> None:
        budgets = [t for t in target_nodes(node.target) if isinstance(t, cst.Name) and _budget_name(t.value)]
        if not budgets or not self._private_run(node.body):
            return
        fa = self.ctx.analysis
        counter = nonrelease.enumerate_counter(node)
        if counter is not None:
            # (g37-4) ``for eps_idx, eps in enumerate(...)``: the counter is no budget; and a counter read by the
            # computation (``beta_hats[t]`` built for ``eps_list[t]``) carries the swept budget there
            budgets = [t for t in budgets if t is not counter]
            if any(n.value == counter.value and not _is_store(n, fa.parent) and not self._reporting(n)
                   for n in walk(node.body) if isinstance(n, cst.Name)):
                return
        fn = fa.enclosing_function(node)
        for var in budgets:
            reads = [n for n in walk(node.body) if isinstance(n, cst.Name) and n.value == var.value
                     and not _is_store(n, fa.parent)]
            if any(not self._reporting(n) for n in reads):
                continue
            if fn is None and self._read_by_a_function(var.value):
                continue
            self.report(node, f"the sweep's `{var.value}` never reaches the mechanism: the loop body runs the "
                              f"same private computation for every value and uses `{var.value}` only to report "
                              f"it, so the results attributed to each budget are all for one noise level")

    @staticmethod
    def _private_run(body: cst.CSTNode) -> bool:
        for n in walk(body):
            if not isinstance(n, cst.Call):
                continue
            name = call_name(n)
            if name in _DRAWS or name.startswith("make_private"):
                return True
            if name in _REPORT:
                continue  # ``template.format(epsilon=eps)``: a keyword named for the budget fills a label
            if any(a.keyword is not None and a.keyword.value in _PRIVACY_KEYWORDS for a in n.args):
                return True
        return False

    def _reporting(self, node: cst.Name) -> bool:
        """Is this read only reported (printed, formatted, logged, used as a results key)?"""
        fa = self.ctx.analysis
        for anc in fa.ancestors(node):
            if isinstance(anc, cst.FormattedString):
                return True
            if isinstance(anc, cst.Call):
                # the first call holding the value decides: a report, or a computation it feeds
                return call_name(anc) in _REPORT
            if isinstance(anc, cst.SubscriptElement):
                sub = fa.parent(anc)
                return isinstance(sub, cst.Subscript) and isinstance(fa.parent(sub), cst.AssignTarget)
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, cst.Modulo) \
                    and isinstance(anc.left, (cst.SimpleString, cst.ConcatenatedString)):
                return True
            if isinstance(anc, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return False
        return False

    def _read_by_a_function(self, name: str) -> bool:
        for fn in walk(self.ctx.module):
            if isinstance(fn, (cst.FunctionDef, cst.Lambda)) and name not in param_names(fn) and any(
                    isinstance(n, cst.Name) and n.value == name for n in walk(fn.body)):
                return True
        return False
