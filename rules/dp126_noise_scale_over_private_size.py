"""DP126: a noise scale divided by the size of the very data the noised value is computed from."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, param_names, walk, words
from dpcheck.rule import Rule

#: called names that draw noise with a scale argument
_DRAWS = frozenset({"laplace", "normal", "gauss", "gaussian", "laplace_noise", "gaussian_noise", "normal_noise",
                    "laplacian", "Laplace", "Normal", "lap", "laplace_mech", "laplace_mechanism",
                    "gaussian_mechanism"})
#: (b85) a mechanism object built with its sensitivity (``LaplaceMechanism(sensitivity=s, epsilon=e)``) and its
#: method that releases a value with the noise (``mech.release(v)``, diffprivlib's ``randomise``)
_MECHANISM_CLASS = re.compile(r"(?i)^\w*(?:laplace|gaussian|geometric)\w*mechanism\w*$|^\w*mechanism$")
_MECHANISM_RELEASE = frozenset({"release", "randomise", "randomize", "add_noise", "privatize", "privatise",
                                "apply", "noise", "perturb", "answer"})
_MECHANISM_SCALE = frozenset({"sensitivity", "scale", "b", "sigma", "std", "sens"})
#: keywords of a draw that are not its scale
_NOT_SCALE = frozenset({"size", "shape", "loc", "mean", "out", "dtype", "device", "generator", "random_state"})
#: calls that take a sample of data (a minibatch: its realised size is DP521's business)
_SAMPLERS = frozenset({"choice", "permutation", "sample", "next", "randint", "shuffle", "random_split",
                       "rand", "binomial", "integers"})


def _root(expr: cst.BaseExpression) -> str | None:
    """``x`` of ``x``, ``x[col]``, ``x.clip(a, b)``; ``self.data`` of ``self.data[...]``; ``data.domain`` stays
    itself (an attribute of the data, not its rows)."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        else:
            break
    return dotted(expr)


def _counted(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The data whose record count ``expr`` is: ``len(X)``, ``X.shape[0]``, ``np.size(X)``, ``X.size(0)``."""
    if isinstance(expr, cst.Call):
        name = call_name(expr)
        if name == "len" and len(expr.args) == 1:
            return expr.args[0].value
        if name == "size" and isinstance(expr.func, cst.Attribute) and dotted(expr.func.value) in ("np", "numpy") \
                and expr.args:
            return expr.args[0].value
        if name == "size" and isinstance(expr.func, cst.Attribute) and len(expr.args) == 1 \
                and isinstance(expr.args[0].value, cst.Integer) and expr.args[0].value.value == "0":
            return expr.func.value
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
            and expr.value.attr.value == "shape" and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0":
            return expr.value.value
    return None


class NoiseScaleOverPrivateSize(Rule):
    id = "DP126"
    name = "noise-scale-over-private-size"
    category = "general"
    severity = "error"
    summary = ("the scale of a noise draw is divided by the record count of the same data the noised value is "
               "computed from (`scale = (b - a) / len(x) / eps` beside `x.mean() + noise`)")
    rationale = (
        "Under add/remove neighbouring the number of records n is itself private. A mechanism whose noise scale "
        "is `range / n` (the mean's sensitivity for a known n) calibrates the noise with the exact n of the data "
        "it releases: the scale changes when one person joins, so the output distribution of neighbouring "
        "datasets differs in its width as well as its centre and the stated ε does not hold (with replace-one "
        "neighbouring the textbook bound needs n to be public, not read from the data). The count is recognised "
        "by its role, whatever the names: `len(X)`, `X.shape[0]`, `np.size(X)` or `X.size(0)` of a value X that "
        "is also an input of the value the noise is added to (or of the other arguments of the mechanism call), "
        "reaching a draw's scale so that the scale shrinks as the count grows (a division, a negative power, "
        "through the function's own assignments, or through a module helper that passes the argument to its "
        "draw); also a record count (`len(self.idxs)`, `X.shape[0]`) handed to a helper that computes the "
        "sensitivity from it — the module's own function dividing by that parameter, or one defined elsewhere "
        "and named for a sensitivity (`cal_sensitivity(lr, C, len(idxs))`) — whose result sets the noise scale. Not reported: counts a budget is divided by (`eps / len(queries)`: the noise grows with them), "
        "lengths of aggregates (a histogram's or marginal's length is the public domain size), counts of a "
        "minibatch (a loop variable or a random sample: DP521), counts that only set a draw's shape, attributes "
        "of the data rather than its rows (`len(data.domain)`). Fix: divide by a public lower bound on n, or release a noisy sum and a noisy count and divide "
        "them (post-processing)."
        " "
        "(h44-2) Not reported either: a divisor that is the size of a minibatch drawn in the same function (`choice(pool, b, replace=False)` then `σ = c / (b·ε)`)."
    )
    TRIGGERS = ("/", "ensitiv")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a draw: a call named like one, or a module function calling one."""
        return facts.calls_any(_DRAWS) or any(_MECHANISM_CLASS.match(n) for n in facts.called)

    VALID = (
        # (b85) twin of the mechanism-object case: the mean's sensitivity uses a public bound on the count
        """
def noisy_stats(table, eps, queries, min_rows):
    rows = table.rows
    out = {}
    for q in queries:
        avg = _mean_of(rows, q)
        lo, hi = q.bounds
        mech = LaplaceMechanism(sensitivity=(hi - lo) / min_rows, epsilon=eps / len(queries))
        out[q.name] = mech.release(avg)
    return out
""",
        # (b85) ordinary ML: a "mechanism" object of a physics simulator scaled by the number of particles
        """
def step_system(particles, dt):
    damping = 1.0 / len(particles)
    mech = FrictionMechanism(scale=damping, dt=dt)
    return mech.apply(particles)
""",
        # (h46-2 twin) the group means' sensitivity uses a public minimum group size
        """
import numpy as np
def noisy_group_means(frame, sensitivity_fn, epsilon, key):
    frame["mean"] = frame[key].apply(np.mean)
    frame["gs"] = frame[key].apply(sensitivity_fn)
    frame["mean"] += frame["gs"].apply(lambda s: np.random.laplace(scale=s / epsilon))
def report(grades, epsilon, min_group):
    per_class = grades.groupby("klass")["mark"].apply(list).to_frame()
    noisy_group_means(per_class, lambda g: 100 / min_group, epsilon, key="mark")
""",
        # (h46-2 twin) the static mechanism given a public bound on the count
        """
import numpy as np
class Mechanisms:
    @staticmethod
    def laplace_mechanism(value, sens, eps):
        b = sens / eps
        return value + np.random.laplace(0, b)
def explore(df, eps, n_public):
    col = df["amount"].dropna().clip(0, 1000.0)
    return Mechanisms.laplace_mechanism(col.mean(), 1000.0 / n_public, eps)
""",
        # ordinary ML code: a per-batch loss normaliser lambda, no sensitivity
        """
import torch
def train(model, loader, opt, reduce_fn):
    for xb, yb in loader:
        loss = reduce_fn(model(xb), yb)
        loss.backward(); opt.step()
train(None, [], None, lambda out, y: ((out - y) ** 2).sum() / len(y))
""",
        # a public bound on the number of records
        """
import numpy as np
def dp_mean(x, lower, upper, epsilon, n_public):
    x = np.clip(x, lower, upper)
    scale = (upper - lower) / n_public / epsilon
    return x.mean() + np.random.laplace(0, scale)
""",
        # noisy sum over noisy count: the size never reaches a scale
        """
import numpy as np
def dp_mean(values, lo, hi, eps):
    values = np.clip(values, lo, hi)
    total = values.sum() + np.random.laplace(0, (hi - lo) * 2 / eps)
    count = len(values) + np.random.laplace(0, 2 / eps)
    return total / max(count, 1)
""",
        # the count sets the draw's shape only
        """
import numpy as np
def perturb(table, eps):
    return table + np.random.laplace(0, 1 / eps, size=len(table))
""",
        # a minibatch's size (a loop variable): another rule's business
        """
import torch
def train(model, loader, sigma, clip):
    for xb in loader:
        g = model.grad(xb)
        noise = torch.normal(0, sigma * clip / len(xb), size=g.shape)
        model.step(g + noise)
""",
        # the scale is divided by the count of other data than the noised value's
        """
import numpy as np
def release(hist, public_rows, eps):
    scale = 1.0 / (eps * len(public_rows))
    return hist + np.random.laplace(0, scale, hist.shape)
""",
        # the length of a histogram (the domain's size, public) in a prior's floor
        """
import numpy as np
def measure(data, cliques, budget, rng):
    out = []
    for proj in cliques:
        hist = data.project(proj).datavector()
        p_min = 1 / len(hist)
        b = 2 / (budget + np.log((1 - p_min) / (1 - p_min * np.exp(budget))))
        out.append(hist + rng.laplace(loc=0, scale=b, size=hist.size))
    return out
""",
        # a budget split over the number of queries: the count raises the noise
        """
import numpy as np
def answer_all(records, queries, rho):
    per_query = rho / len(queries)
    sigma = np.sqrt(1 / (2 * per_query))
    return [q(records) + np.random.normal(0, sigma) for q in queries]
""",
        # twin of the sensitivity helper: a public bound on the client's records is passed
        """
import numpy as np
from utils.dp_mechanism import cal_sensitivity
class LocalUpdate:
    def add_noise(self, state):
        sensitivity = cal_sensitivity(self.args.lr, self.args.dp_clip, self.args.min_client_size)
        for k, v in state.items():
            state[k] = v + np.random.laplace(0, sensitivity / self.eps, v.shape)
        return state
""",
        # a helper given the number of queries: the count splits the budget (it grows the noise)
        """
import numpy as np
def per_query_sensitivity(base, n_queries):
    return base * n_queries
def answer(records, queries, eps):
    sens = per_query_sensitivity(1.0, len(queries))
    return [q(records) + np.random.laplace(0, sens / eps) for q in queries]
""",
        # a helper named for a sensitivity given the number of features: not a record count
        """
import numpy as np
from mech import l2_sensitivity
def release(weights, features, eps):
    s = l2_sensitivity(1.0, len(features))
    return weights + np.random.laplace(0, s / eps, weights.shape)
""",
        # ordinary ML code: a learning-rate helper divides by the dataset size, no noise draw
        """
import torch
def lr_for(base, n):
    return base / n
def train(model, data, opt):
    for g in opt.param_groups:
        g["lr"] = lr_for(0.1, len(data))
    return model
""",
        # (h44-2) the divisor is the size of the minibatch drawn in the loop (a mean of b clipped gradients);
        # b is worked out from the stream length, but the sensitivity of the mean is c / b whatever n is
        """
import numpy as np
def phase(S, eps, d, L, delta):
    n = S.shape[0]
    b = int(max((n / np.log(d)) ** 0.5, 1))
    for _ in range(10):
        picked = np.random.choice(range(n), b, replace=False)
        grad = np.mean([np.clip(S[j], -L, L) for j in picked], axis=0)
        sigma = L * np.sqrt(np.log(1 / delta)) / (b * eps)
        grad = grad + np.random.normal(0, sigma, size=grad.shape)
    return grad
""",
    )
    INVALID = (
        # (b85) a mechanism object built with sensitivity = range / len(rows), the exact count of the rows the
        # released mean is computed from
        """
def noisy_stats(table, eps, queries):
    rows = table.rows
    out = {}
    for q in queries:
        if q.kind == "count":
            mech = LaplaceMechanism(sensitivity=1.0, epsilon=eps)
            out[q.name] = mech.release(float(len(rows)))
        else:
            avg = _mean_of(rows, q)
            lo, hi = q.bounds
            sens = (hi - lo) / max(len(rows), 1)  # <-
            mech = LaplaceMechanism(sensitivity=sens, epsilon=eps)
            out[q.name] = mech.release(avg)
    return out
""",
        # (h46-2) a sensitivity function dividing a score range by the size of the group it is applied to
        """
import numpy as np
def noisy_group_means(frame, sensitivity_fn, epsilon, key):
    frame["mean"] = frame[key].apply(np.mean)
    frame["gs"] = frame[key].apply(sensitivity_fn)
    frame["mean"] += frame["gs"].apply(lambda s: np.random.laplace(scale=s / epsilon))
def report(grades, epsilon):
    per_class = grades.groupby("klass")["mark"].apply(list).to_frame()
    noisy_group_means(per_class, lambda g: 100 / len(g), epsilon, key="mark")  # <-
""",
        # (h46-2) a static mechanism method computing its scale in a local before the draw
        """
import numpy as np
class Mechanisms:
    @staticmethod
    def laplace_mechanism(value, sens, eps):
        b = sens / eps
        return value + np.random.laplace(0, b)
def explore(df, eps):
    col = df["amount"].dropna()
    spread = 1000.0
    return Mechanisms.laplace_mechanism(col.mean(), spread / len(col), eps)  # <-
""",
        # (h44-2 twin) the same mean over all n records, the scale divided by the exact n
        """
import numpy as np
def phase(S, eps, L, delta):
    n = S.shape[0]
    grad = np.mean([np.clip(row, -L, L) for row in S], axis=0)
    sigma = L * np.sqrt(np.log(1 / delta)) / (n * eps)  # <-
    return grad + np.random.normal(0, sigma, size=grad.shape)
""",
        # the client's sample size handed to a sensitivity helper defined in another module (FL, Laplace)
        """
import numpy as np
import torch
from utils.dp_mechanism import cal_sensitivity
class LocalUpdate:
    def __init__(self, args, idxs):
        self.idxs = idxs
    def add_noise(self, net):
        sensitivity = cal_sensitivity(self.lr, self.dp_clip, len(self.idxs))  # <-
        state = net.state_dict()
        for k, v in state.items():
            state[k] += torch.from_numpy(np.random.laplace(0, sensitivity * self.noise_scale, v.shape))
        net.load_state_dict(state)
""",
        # the module's own scale function divides a clip bound by the local data size it is given
        """
import numpy as np
def noise_scale_for(clip, q, local_size, epsilon):
    delta_s = 2 * clip / local_size
    return delta_s * np.sqrt(2 * q) / epsilon
def client_round(update, train_x, clip, epsilon):
    scale = noise_scale_for(clip, 0.1, train_x.shape[0], epsilon)  # <-
    return update + np.random.normal(0, scale, update.shape)
""",
        # the mean's sensitivity range / n with n = len of the private column
        """
import numpy as np
def lap(scale):
    return np.random.laplace(0, scale)
def dp_mean(frame, col, a, b, eps):
    x = frame[col].clip(a, b).values
    n = len(x)
    true = x.mean()
    sens = (b - a) / n  # <-
    return true + lap(sens / eps)
""",
        # a sensitivity divided in place by the data's length, then a helper draw
        """
import numpy as np
class Mechanism:
    def answer(self, data, query, eps):
        exact = query(data)
        sensitivity = self.base_sensitivity
        sensitivity = sensitivity / len(data)  # <-
        noise = np.random.laplace(0, sensitivity / eps)
        return exact + noise
""",
        # the shape of the data array in the scale of a Gaussian
        """
import numpy as np
def dp_average(rows, clip, epsilon, delta):
    rows = np.clip(rows, -clip, clip)
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    std = sigma * 2 * clip / rows.shape[0]  # <-
    return rows.mean(axis=0) + np.random.normal(0, std, rows.shape[1])
""",
        # an in-place division of the scale by the table's row count
        """
import torch
def release_mean(table, bound, epsilon):
    scale = 2 * bound / epsilon
    scale /= table.size(0)  # <-
    return table.clamp(-bound, bound).mean(0) + torch.distributions.Laplace(0, scale).sample()
""",
        # the noise is drawn by a helper given the statistic and the scale
        """
import numpy as np
def laplace_mech(value, scale):
    return value + np.random.laplace(0.0, scale)
def proportion(data, epsilon):
    p = np.count_nonzero(data) / np.size(data)
    return laplace_mech(p, 1.0 / (np.size(data) * epsilon))  # <-
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        #: the module's own functions that draw noise (``def lap(scale): return np.random.laplace(0, scale)``)
        self._helpers = {sub.name.value: sub for sub in walk(node) if isinstance(sub, cst.FunctionDef) and any(
            isinstance(c, cst.Call) and call_name(c) in _DRAWS for c in walk(sub))}
        self._functions = {sub.name.value: sub for sub in walk(node) if isinstance(sub, cst.FunctionDef)}

    def visit_Call(self, node: cst.Call) -> None:
        """(h46-2) A sensitivity *function* handed to a mechanism: ``get_dp_mean(df, lambda x: 100 / len(x), eps)``
        — the lambda divides a range by the exact size of the group it is applied to, and the parameter (or
        keyword) it is bound to is named for a sensitivity."""
        callee = self._functions.get(call_name(node) or "")
        names = param_names(callee) if callee is not None else []
        if names and names[0] in ("self", "cls") and isinstance(node.func, cst.Attribute):
            names = names[1:]
        position = 0
        for arg in node.args:
            if arg.star:
                return
            bound = arg.keyword.value if arg.keyword is not None else (
                names[position] if position < len(names) else None)
            if arg.keyword is None:
                position += 1
            lam = arg.value
            if not isinstance(lam, cst.Lambda) or bound is None or "ensitiv" not in bound.lower():
                continue
            params = {p.name.value for p in lam.params.params}
            for leaf, _site in _shrinking(lam.body, {}, 1, set(), None):
                data = _counted(leaf)
                if isinstance(data, cst.Name) and data.value in params:
                    self.report(leaf, f"`{self.ctx.analysis.code(lam).strip()}` is handed to `{call_name(node)}` as "
                                      f"its `{bound}`: the sensitivity is divided by `{self.ctx.analysis.code(leaf).strip()}`, "
                                      "the exact size of the private group it is applied to, so the noise width "
                                      "depends on whether one person is in the group; divide by a public bound on "
                                      "the group size, or noise the sum and the count separately")
                    return

    def _draw(self, call: cst.Call) -> bool:
        name = call_name(call)
        return name in _DRAWS or name in self._helpers

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body, into_scopes=False))
        values: dict[str, list[cst.BaseExpression]] = {}
        loop_vars: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign):
                for target in sub.targets:
                    if isinstance(target.target, (cst.Name, cst.Attribute)):
                        key = dotted(target.target)
                        if key is not None:
                            values.setdefault(key, []).append(sub.value)
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.target, (cst.Name, cst.Attribute)):
                key = dotted(sub.target)
                if key is not None:
                    values.setdefault(key, []).append(sub)  # type: ignore[arg-type]
            elif isinstance(sub, cst.For):
                loop_vars |= {n.value for n in walk(sub.target) if isinstance(n, cst.Name)}
            elif isinstance(sub, cst.With):
                loop_vars |= {n.value for item in sub.items if item.asname is not None
                              for n in walk(item.asname.name) if isinstance(n, cst.Name)}
        for sub in body:
            if isinstance(sub, cst.Call) and self._draw(sub):
                self._draw_site(node, sub, values, loop_vars)
        self._mechanism_objects(node, body, values, loop_vars)

    def _mechanism_objects(self, fn: cst.FunctionDef, body: list[cst.CSTNode],
                           values: dict[str, list[cst.BaseExpression]], loop_vars: set[str]) -> None:
        """(b85) ``mech = LaplaceMechanism(sensitivity=s, epsilon=e)`` then ``mech.release(v)``: the object's
        sensitivity is the scale, ``v`` the noised value."""
        built: dict[str, list[cst.BaseExpression]] = {}
        for sub in body:
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.value, cst.Call) \
                    and _MECHANISM_CLASS.match(call_name(sub.value) or "") and call_name(sub.value) not in _DRAWS:
                key = dotted(sub.targets[0].target)
                scale = [a.value for a in sub.value.args
                         if a.keyword is not None and a.keyword.value in _MECHANISM_SCALE]
                if key is not None and scale:
                    built.setdefault(key, []).extend(scale)
        if not built:
            return
        for sub in body:
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                    and sub.func.attr.value in _MECHANISM_RELEASE and dotted(sub.func.value) in built and sub.args:
                noised = [a.value for a in sub.args if a.star == ""]
                if self._check(fn, built[dotted(sub.func.value)], noised, values, loop_vars):
                    return

    def _slice(self, exprs: list[cst.BaseExpression], values: dict[str, list[cst.BaseExpression]]
               ) -> list[cst.BaseExpression]:
        """The expressions ``exprs`` are computed from inside the function (local assignments, a few hops)."""
        out = list(exprs)
        seen: set[str] = set()
        frontier = list(exprs)
        for _ in range(5):
            nxt: list[cst.BaseExpression] = []
            for expr in frontier:
                for sub in walk(expr):
                    key = dotted(sub) if isinstance(sub, (cst.Name, cst.Attribute)) else None
                    if key is None or key in seen or key not in values:
                        continue
                    seen.add(key)
                    nxt.extend(values[key])
            out.extend(nxt)
            frontier = nxt
        return out

    def _roots(self, exprs: list[cst.BaseExpression], values: dict[str, list[cst.BaseExpression]]) -> set[str]:
        """Names (and ``self.x`` attributes) the expressions read, through local assignments."""
        roots: set[str] = set()
        for expr in self._slice(exprs, values):
            for sub in walk(expr):
                if isinstance(sub, (cst.Name, cst.Attribute)):
                    key = dotted(sub)
                    if key is not None:
                        roots.add(key)
        return roots

    def _draw_site(self, fn: cst.FunctionDef, call: cst.Call, values: dict[str, list[cst.BaseExpression]],
                   loop_vars: set[str]) -> None:
        scale_args = [a.value for a in call.args
                      if not (a.keyword is not None and a.keyword.value in _NOT_SCALE) and a.star == ""]
        if call_name(call) in _DRAWS and len(scale_args) >= 3 and call.args[2].keyword is None:
            scale_args = scale_args[:2]  # ``normal(0, s, size)``: the third positional is the shape
        # the value the noise is added to: the other operand of ``value + draw`` (or of ``value + noise``)
        noised: list[cst.BaseExpression] = []
        drawn = self._drawn(call)
        holders = {dotted(t.target) for a in walk(fn.body, into_scopes=False) if isinstance(a, cst.Assign)
                   and a.value is drawn for t in a.targets}
        holders.discard(None)
        for sub in walk(fn.body, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Add, cst.Subtract)):
                for side, other in ((sub.left, sub.right), (sub.right, sub.left)):
                    if side is drawn or dotted(side) in holders and dotted(side) is not None:
                        noised.append(other)
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.operator, (cst.AddAssign,
                                                                               cst.SubtractAssign)):
                if sub.value is drawn or dotted(sub.value) in holders and dotted(sub.value) is not None:
                    noised.append(sub.target)
        if call_name(call) in self._helpers or not noised:
            # ``laplace_mech(value, scale)``: the mechanism adds the draw itself; each argument in turn is the
            # scale, the others the noised value
            for i, sign in self._helper_scales(call, scale_args):
                if i < len(scale_args) and self._check(fn, [scale_args[i]], noised + scale_args[:i] + scale_args[i + 1:], values,
                               loop_vars, sign):
                    return
            return
        self._check(fn, scale_args, noised, values, loop_vars)

    def _drawn(self, call: cst.Call) -> cst.BaseExpression:
        """The expression holding the draw: ``Laplace(0, s).sample()``, ``s * np.random.laplace()``."""
        fa = self.ctx.analysis
        node: cst.BaseExpression = call
        for _ in range(4):
            parent = fa.parent(node)
            if isinstance(parent, cst.Attribute) and parent.value is node:
                above = fa.parent(parent)
                if isinstance(above, cst.Call) and above.func is parent:
                    node = above
                    continue
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply):
                node = parent
                continue
            break
        return node

    def _helper_scales(self, call: cst.Call, args: list[cst.BaseExpression]) -> list[tuple[int, int]]:
        """Indices into ``args`` (the call's arguments) a module's own noise helper passes on to its draw
        (``def lap(v, scale): return v + np.random.laplace(0, scale)``: the second); all of them for a
        mechanism defined elsewhere."""
        helper = self._helpers.get(call_name(call))
        if helper is None:
            return [(i, 1) for i in range(len(args))]
        names = param_names(helper)
        if names and names[0] in ("self", "cls") and isinstance(call.func, cst.Attribute):
            names = names[1:]
        drawn = {n.value for c in walk(helper) if isinstance(c, cst.Call) and call_name(c) in _DRAWS
                 for a in c.args for n in walk(a.value) if isinstance(n, cst.Name)}
        # (h46-2) through the helper's own assignments: ``scale = sensitivity / epsilon`` then ``laplace(0, scale)``
        local = {t.target.value: a.value for a in walk(helper) if isinstance(a, cst.Assign)
                 for t in a.targets if isinstance(t.target, cst.Name)}
        for _ in range(3):
            more = {n.value for name in drawn if name in local for n in walk(local[name]) if isinstance(n, cst.Name)}
            if more <= drawn:
                break
            drawn |= more
        # a parameter the helper divides by (``scale=sens / eps``) is a budget: the scale shrinks as it grows
        divisors = {n.value for d in walk(helper) if isinstance(d, cst.BinaryOperation)
                    and isinstance(d.operator, cst.Divide) for n in walk(d.right) if isinstance(n, cst.Name)}
        out: list[tuple[int, int]] = []
        position = 0
        given = [a for a in call.args if not (a.keyword is not None and a.keyword.value in _NOT_SCALE)
                 and a.star == ""]
        for i, arg in enumerate(given):
            if arg.keyword is not None:
                if arg.keyword.value in drawn:
                    out.append((i, -1 if arg.keyword.value in divisors else 1))
                continue
            if position < len(names) and names[position] in drawn:
                out.append((i, -1 if names[position] in divisors else 1))
            position += 1
        return out

    def _check(self, fn: cst.FunctionDef, scale_args: list[cst.BaseExpression], noised: list[cst.BaseExpression],
               values: dict[str, list[cst.BaseExpression]], loop_vars: set[str], sign: int = 1) -> bool:
        fa = self.ctx.analysis
        # without a noised value (``state[k] += from_numpy(laplace(scale=s))``) only a count handed to a
        # sensitivity helper is reported: the helper's role says what the count is
        data_roots = self._roots(noised, values) if noised else set()
        drawn_sizes = _sample_sizes(fn)
        for expr in scale_args:
            for leaf, site in _shrinking(expr, values, sign, set(), expr if sign < 0 else None, fa.callee):
                data = _counted(leaf)
                root = _root(data) if data is not None else None
                helper = isinstance(site, cst.Call)  # the count handed to a sensitivity helper
                if root is None or root in loop_vars or not _records(root, fn, values):
                    continue
                if root not in data_roots and not (helper and not words(root) & _NOT_RECORDS):
                    continue
                if any(isinstance(c, cst.Call) and call_name(c) in _SAMPLERS
                       for v in self._slice(values.get(root, []), values) for c in walk(v)):
                    continue  # a random sample of the data: its size is DP521's business
                if isinstance(site, cst.BinaryOperation) and any(
                        isinstance(n, cst.Name) and n.value in drawn_sizes for n in walk(site.right)):
                    # (h44-2) the divisor is the size of a minibatch drawn in this function
                    # (``choice(range(m), b, replace=False)`` then ``sigma = c / (b * eps)``): the mean of b
                    # clipped terms has sensitivity c / b whatever n is
                    continue
                if helper:
                    self.report(leaf, f"`{fa.code(leaf).strip()}`, the exact record count of `{root}`, is handed "
                                      f"to `{call_name(site)}`, which divides the sensitivity by it, and the result "
                                      "sets the noise scale: under add/remove neighbouring that count is private, so "
                                      "the noise width depends on whether one person is in the data; pass a public "
                                      "bound on n")
                    return True
                self.report(site, f"the noise scale is divided by `{fa.code(leaf).strip()}`, the exact "
                                  f"record count of `{root}`, the data the noised value is computed from: "
                                  "under add/remove neighbouring that count is private, so the noise "
                                  "width itself depends on whether one person is in the data; divide by "
                                  "a public bound on n, or noise the sum and the count separately")
                return True
        return False


def _sample_sizes(fn: cst.FunctionDef) -> set[str]:
    """Names that set how many items a random draw in ``fn`` takes (``choice(pool, b, replace=False)``,
    ``random.sample(pool, k=b)``, ``randint(0, n, size=b)``): minibatch sizes."""
    out: set[str] = set()
    for call in walk(fn.body):
        if not (isinstance(call, cst.Call) and call_name(call) in ("choice", "sample", "randint", "integers")):
            continue
        positional = [a.value for a in call.args if a.keyword is None and a.star == ""]
        sizes = [a.value for a in call.args if a.keyword is not None and a.keyword.value in ("size", "k")]
        if call_name(call) in ("choice", "sample"):
            sizes += positional[1:2]
        else:
            sizes += positional[2:3]
        out.update(n.value for s in sizes for n in walk(s) if isinstance(n, cst.Name))
    return out


#: calls through which a scale keeps its direction (``sqrt(1 / n)`` still shrinks as n grows)
_MONOTONE = frozenset({"sqrt", "abs", "float", "int", "max", "min", "maximum", "minimum", "log", "exp", "round",
                       "ceil", "floor", "square", "fabs", "asarray", "array", "tensor"})


def _shrinking(expr: cst.CSTNode, values: dict[str, list[cst.BaseExpression]], sign: int, seen: set[str],
               site: cst.CSTNode | None, callee=None) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
    """Record counts in ``expr`` the value decreases with (``c / n``, ``c * n ** -1``, ``sqrt(1 / n)``),
    each with the division that puts it there; followed through the function's own assignments. A count
    a budget is divided by (``eps / len(queries)``: the budget split) lands in the numerator: not returned."""
    out: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
    if isinstance(expr, (cst.Call, cst.Subscript)) and _counted(expr) is not None:
        if sign < 0 and site is not None:
            out.append((expr, site))
        return out
    if isinstance(expr, cst.BinaryOperation):
        op = expr.operator
        if isinstance(op, cst.Divide):
            return _shrinking(expr.left, values, sign, seen, site, callee) + _shrinking(expr.right, values, -sign, seen,
                                                                                  expr, callee)
        if isinstance(op, (cst.Multiply, cst.Add)):
            return _shrinking(expr.left, values, sign, seen, site, callee) + _shrinking(expr.right, values, sign, seen, site, callee)
        if isinstance(op, cst.Subtract):
            return _shrinking(expr.left, values, sign, seen, site, callee) + _shrinking(expr.right, values, -sign, seen,
                                                                                   site, callee)
        if isinstance(op, cst.Power):
            exponent = expr.right
            negative = isinstance(exponent, cst.UnaryOperation) and isinstance(exponent.operator, cst.Minus)
            return _shrinking(expr.left, values, -sign if negative else sign, seen, expr if negative else site, callee)
        return out
    if isinstance(expr, cst.UnaryOperation):
        return _shrinking(expr.expression, values, sign, seen, site, callee)
    if isinstance(expr, cst.IfExp):
        return _shrinking(expr.body, values, sign, seen, site, callee) + _shrinking(expr.orelse, values, sign, seen, site, callee)
    if isinstance(expr, cst.Call) and callee is not None and call_name(expr) not in _MONOTONE:
        # ``cal_sensitivity(lr, clip, len(idxs))``: a sensitivity helper given the record count
        for arg in _divisor_args(expr, callee(expr)):
            if _counted(arg) is not None and sign > 0:
                out.append((arg, expr))
        return out
    if isinstance(expr, cst.Call) and call_name(expr) in _MONOTONE:
        for arg in expr.args:
            out.extend(_shrinking(arg.value, values, sign, seen, site, callee))
        return out
    if isinstance(expr, cst.AugAssign):
        if isinstance(expr.operator, cst.DivideAssign):
            return _shrinking(expr.value, values, -sign, seen, expr, callee)
        if isinstance(expr.operator, (cst.MultiplyAssign, cst.AddAssign)):
            return _shrinking(expr.value, values, sign, seen, site, callee)
        return out
    if isinstance(expr, (cst.Name, cst.Attribute)):
        key = dotted(expr)
        if key is None or key in seen or key not in values:
            return out
        seen.add(key)
        for value in values[key]:
            out.extend(_shrinking(value, values, sign, seen, site, callee))
        seen.discard(key)
    return out


#: words of a function that computes a sensitivity (its count arguments are divisors: ``2 * C / n``)
_SENSITIVITY_WORDS = frozenset({"sensitivity", "sens", "sensitivities"})


def _divides_by(fn: cst.FunctionDef, param: str) -> bool:
    """Does ``fn`` divide by ``param`` (``2 * lr * clip / dataset_size``, ``c / (n * eps)``) or raise it to a
    negative power, with ``param`` never reassigned?"""
    for sub in walk(fn.body):
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide):
            right = sub.right
            factors = [right]
            while factors:
                f = factors.pop()
                if isinstance(f, cst.Name) and f.value == param:
                    return True
                if isinstance(f, cst.BinaryOperation) and isinstance(f.operator, cst.Multiply):
                    factors += [f.left, f.right]
                elif isinstance(f, cst.Call) and call_name(f) in ("sqrt", "float", "int") and f.args:
                    factors.append(f.args[0].value)
    return False


def _divisor_args(call: cst.Call, fn: cst.FunctionDef | None) -> list[cst.BaseExpression]:
    """Arguments of ``call`` a sensitivity or scale is divided by: for the module's own function, those whose
    parameter it divides by and whose result it returns; for a helper defined elsewhere and named for a
    sensitivity (``cal_sensitivity``), every positional argument."""
    given = [a for a in call.args if a.star == ""]
    if fn is None:
        if not words(call_name(call) or "") & _SENSITIVITY_WORDS:
            return []
        return [a.value for a in given if a.keyword is None]
    if not any(isinstance(r, cst.Return) and r.value is not None for r in walk(fn.body)):
        return []
    names = param_names(fn)
    if names and names[0] in ("self", "cls") and isinstance(call.func, cst.Attribute):
        names = names[1:]
    out: list[cst.BaseExpression] = []
    position = 0
    for arg in given:
        if arg.keyword is not None:
            name = arg.keyword.value
        else:
            name = names[position] if position < len(names) else None
            position += 1
        if name is not None and _divides_by(fn, name):
            out.append(arg.value)
    return out


#: words of a counted value that is not a set of records (a count of queries, columns or clients raises a
#: sensitivity or splits a budget; it is not the private n)
_NOT_RECORDS = frozenset({"query", "queries", "feature", "features", "column", "columns", "cols", "attributes",
                          "domain", "bins", "clients", "users", "teachers", "classes", "labels", "layers",
                          "params", "parameters", "keys", "candidates", "workload", "marginals", "steps",
                          "rounds", "epochs", "batch", "batches", "shape", "dims"})


#: operations that keep one row per record (a column, a clipped or converted copy, a file read)
_ROW_OPS = frozenset({"clip", "astype", "to_numpy", "numpy", "dropna", "copy", "array", "asarray", "tensor",
                      "from_numpy", "read_csv", "read_parquet", "read_table", "load", "loadtxt", "genfromtxt",
                      "reshape", "flatten", "ravel", "squeeze", "float", "double", "to", "cpu", "detach", "values",
                      "clamp", "fillna", "reset_index", "drop", "filter", "query", "where", "abs", "concatenate",
                      "vstack", "hstack", "DataFrame", "Series", "list", "get"})


def _records(root: str, fn: cst.FunctionDef, values: dict[str, list[cst.BaseExpression]]) -> bool:
    """Does ``root`` hold one entry per record (a parameter, an attribute, a column or clipped copy of one,
    a file read)? A histogram, a marginal or any other aggregate (``data.project(p).datavector()``,
    ``np.bincount(x)``) has the domain's length, which is public."""
    if "." in root or root not in values:
        return True
    for value in values[root]:
        expr: cst.CSTNode = value
        for _ in range(8):
            if isinstance(expr, cst.Subscript):
                expr = expr.value
            elif isinstance(expr, cst.Attribute):
                expr = expr.value
            elif isinstance(expr, cst.Call) and call_name(expr)[:1].isupper() and expr.args:
                expr = expr.args[0].value  # a wrapper constructed around the records (``Dataset(df, domain)``)
            elif isinstance(expr, cst.Call) and call_name(expr) in _ROW_OPS:
                if isinstance(expr.func, cst.Attribute) and dotted(expr.func.value) not in ("np", "numpy", "torch",
                                                                                             "pd", "pandas"):
                    expr = expr.func.value
                elif expr.args:
                    expr = expr.args[0].value
                else:
                    break
            else:
                break
        if not isinstance(expr, (cst.Name, cst.SimpleString, cst.FormattedString, cst.Attribute)):
            return False
    return True
