"""DP306: the accountant is charged a step count from a 0-based loop variable after the step ran."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, number, walk, words
from dpcheck.analysis.vocabulary import ACCOUNTANT_CALL
from dpcheck.rule import Rule
from dpcheck.analysis.clipping import ident

_STEP_KEYWORDS = frozenset({"steps", "num_steps", "n_steps", "iterations", "T", "step", "global_step", "t",
                            "num_iterations", "n_iter", "rounds", "num_rounds", "epochs", "num_epochs"})
#: accountant calls whose steps argument is positional: name -> index
_POSITIONAL_STEPS = {"compute_rdp": 2, "apply_dp_sgd_analysis": 2, "compute_rdp_sample_without_replacement": 2}
#: calls that take a training step (the step the count must include)
_TRAIN_CALLS = frozenset({
    "backward", "step", "minimize", "apply_gradients", "run", "train_step", "train_on_batch", "optimize",
    "update", "fit", "partial_fit",
})


def _iterator_value(loop: cst.For, fn: cst.CSTNode | None) -> cst.BaseExpression:
    """``loop.iter``, or for ``for i in epoch_iterator`` the one value the function assigns that name
    (``epoch_iterator = tqdm(range(epochs), disable=not verbose)``)."""
    if not isinstance(loop.iter, cst.Name) or fn is None:
        return loop.iter
    values = [sub.value for sub in walk(fn, into_scopes=False)
              if isinstance(sub, cst.Assign) and len(sub.targets) == 1
              and isinstance(sub.targets[0].target, cst.Name) and sub.targets[0].target.value == loop.iter.value]
    return values[0] if len(values) == 1 else loop.iter


def _loop_variable(loop: cst.For, fn: cst.CSTNode | None = None) -> str | None:
    """The variable of ``for v in range(n)`` / ``range(start, n)`` (not ``range(1, …)``), also through a local
    name the function binds to such an iterator."""
    iterator = _iterator_value(loop, fn)
    if not isinstance(loop.target, cst.Name) or not isinstance(iterator, cst.Call):
        return None
    if call_name(iterator) not in ("range", "trange", "tqdm"):
        return None
    args = iterator.args
    if call_name(iterator) != "range":
        inner = args[0].value if args else None
        if not (isinstance(inner, cst.Call) and call_name(inner) == "range"):
            return None
        args = inner.args
    if len(args) >= 2 and number(args[0].value) not in (None, 0):
        return None
    return loop.target.value


_CONFIGURED_STEPS = frozenset({"iterations", "iters", "steps", "niter", "iter", "num_steps", "n_steps", "max_steps",
                               "total_steps", "num_iterations", "n_iterations", "n_iters"})


def _configured_steps(expr: cst.BaseExpression) -> bool:
    """``args.iterations``, ``config['n_steps']``, ``FLAGS.max_steps``: a configured step count (the number an
    accountant elsewhere is given), not a local loop bound."""
    if isinstance(expr, cst.Attribute) and words(expr.attr.value) & {"pretrain", "warmup", "pre", "burnin", "public"}:
        return False  # warm-up iterations are not the ones the accountant is given
    if isinstance(expr, cst.Attribute):
        return expr.attr.value in _CONFIGURED_STEPS or bool(words(expr.attr.value) & {"iterations", "iters"})
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        key = expr.slice[0].slice
        if isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString):
            return key.value.value.strip("'\"") in _CONFIGURED_STEPS
    return False


def _plus_one_bound(loop: cst.For) -> cst.BaseExpression | None:
    """``range(E + 1)`` / ``range(0, E + 1)`` (also inside ``tqdm``/``trange``): the ``E`` of a loop that runs
    E + 1 times."""
    it = loop.iter
    if not isinstance(it, cst.Call):
        return None
    if call_name(it) == "tqdm" and it.args and isinstance(it.args[0].value, cst.Call):
        it = it.args[0].value
    if call_name(it) not in ("range", "trange"):
        return None
    args = [a.value for a in it.args if a.keyword is None]
    if len(args) == 2 and number(args[0]) == 0:
        args = args[1:]
    if len(args) != 1:
        return None
    bound = args[0]
    if isinstance(bound, cst.BinaryOperation) and isinstance(bound.operator, cst.Add) and number(bound.right) == 1:
        return bound.left
    return None


def _ast_plus_one_loop(loop: ast.For) -> bool:
    """``_plus_one_bound`` with a configured count, on CPython's ``ast`` (a superset)."""
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "tqdm" and it.args \
            and isinstance(it.args[0], ast.Call):
        it = it.args[0]
    if not isinstance(it, ast.Call) or not it.args:
        return False
    bound = it.args[-1]
    return isinstance(bound, ast.BinOp) and isinstance(bound.op, ast.Add) and isinstance(bound.right, ast.Constant) \
        and bound.right.value == 1 and isinstance(bound.left, (ast.Attribute, ast.Subscript, ast.Name))


#: a call that calibrates noise or accounts privacy from a count of passes
_CALIBRATION_WORDS = frozenset({"gaussian", "sigma", "noise", "calibrate", "calibration", "laplace", "epsilon", "eps",
                                "privacy", "rdp", "accountant", "dp", "std", "multiplier"})


def _starts_at_zero(fn: cst.CSTNode, loop: cst.While, var: str) -> bool:
    """The function sets ``var = 0`` (and nothing else) before ``loop``."""
    values = [sub.value for sub in walk(fn, into_scopes=False) if isinstance(sub, cst.Assign) and len(sub.targets) == 1
              and isinstance(sub.targets[0].target, cst.Name) and sub.targets[0].target.value == var]
    return len(values) == 1 and number(values[0]) == 0


def _steps_by_one(loop: cst.While, var: str) -> bool:
    """The loop body adds 1 to ``var`` once per pass (``var += 1``)."""
    incs = [sub for sub in walk(loop.body) if isinstance(sub, cst.AugAssign)
            and isinstance(sub.target, cst.Name) and sub.target.value == var]
    return len(incs) == 1 and isinstance(incs[0].operator, cst.AddAssign) and number(incs[0].value) == 1


def _calibrated_with(fn: cst.CSTNode, text: str) -> cst.Call | None:
    """A call in ``fn`` that calibrates noise or accounts privacy and is handed ``text`` (the loop bound) as an
    argument or inside one (``int(self.e * self.r)``), never ``text + 1``."""
    from dpcheck.analysis.syntax import dotted

    for call in walk(fn, into_scopes=False):
        if not isinstance(call, cst.Call):
            continue
        name_words = words(call_name(call))
        if not name_words & _CALIBRATION_WORDS:
            continue
        handed = [n for a in call.args for n in walk(a.value)
                  if isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) == text]
        if handed and not any(_adds_one(a.value) for a in call.args):
            return call
    return None


def _adds_one(expr: cst.BaseExpression) -> bool:
    return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Add)
               and (number(n.left) == 1 or number(n.right) == 1) for n in walk(expr))


class StepsOffByOne(Rule):
    id = "DP306"
    name = "steps-off-by-one"
    category = "general"
    severity = "error"
    summary = "the accountant is charged one step fewer than were taken: a 0-based loop index after the step, or a loop of configured steps + 1"
    rationale = (
        "An accountant composes the steps actually taken. Inside `for idx in range(n)` the step of "
        "iteration `idx` is the (idx + 1)-th, so charging `compute_epsilon(epoch * num_batches + idx)` "
        "(or `compute_rdp(q, σ, steps=it, …)`) *after* the update undercounts by one: the ε "
        "reported (and the stopping test against the budget) is for one step fewer than the model "
        "has seen — over a run that stops on the budget, the released model overshoots it. "
        "The same undercount from the loop's side: `for it in range(args.iterations + 1)` around the "
        "training step runs iterations + 1 updates while the accountant (in this module or, when the "
        "module has none, the analysis script reading the same configured count) charges "
        "`iterations`. "
        "Not reported: a count with `+ 1`, a loop starting at 1, an accountant queried before the "
        "step of that iteration, a `+ 1` loop over a local bound (not a configured `args.`/`FLAGS.`/"
        "`config[...]` step count), a module whose accountant charges another count, code with no DP "
        "context. "
        "Also reported: `it = 0; while it <= E: …; it += 1` (E + 1 passes) where a noise calibration or "
        "accountant call in the same function is handed `E` (`gaussian(δ, ε, …, self.e, int(self.e * self.r))`). "
        "Fix: charge `idx + 1` steps after the update (or keep a counter incremented with the step); "
        "loop `range(iterations)`."
        " "
        "(h44-2) Also reported: `for step in range(steps_per_epoch)` around a training step where `steps_per_epoch` is computed by another formula than the one a calibration function (named for σ/noise/ε) assigns to the same name (`max(5, n·q)` vs `max(1, n·q)`)."
    )
    TRIGGERS = ("range(", "<=", "on_epoch_end")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is an accountant call inside ``for v in range(…)`` (or ``tqdm``/``trange``)
        whose arguments read ``v``; or ``while i <= bound`` beside a calibration call; or a Keras callback's
        ``on_epoch_end(self, epoch, …)`` beside an accountant call."""
        if any(fn.name == "on_epoch_end" for fn in facts.functions) \
                and any(ACCOUNTANT_CALL.match(name) for name in facts.called):
            return True
        if any(isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)  # type: ignore[attr-defined]
               and loop.iter.func.id == "range" and len(loop.iter.args) == 1  # type: ignore[attr-defined]
               and isinstance(loop.iter.args[0], ast.Name)  # type: ignore[attr-defined]
               and words(loop.iter.args[0].id) & {"steps", "iterations", "iters", "updates", "batches"}  # type: ignore[attr-defined]
               for loop in facts.nodes(ast.For)) and any(
                words(fn.name) & {"noise", "sigma", "multiplier", "epsilon", "privacy", "accountant", "accounting",
                                  "calibrate"} for fn in facts.functions):
            return True  # (h44-2) a step count recomputed beside a calibration function
        if any(isinstance(loop.test, ast.Compare) and len(loop.test.ops) == 1  # type: ignore[attr-defined]
               and isinstance(loop.test.ops[0], ast.LtE) for loop in facts.nodes(ast.While)):  # type: ignore[attr-defined]
            return True
        if "range" not in facts.called:
            return False
        if any(_ast_plus_one_loop(loop) for loop in facts.nodes(ast.For)):  # type: ignore[arg-type]
            return True
        if not any(ACCOUNTANT_CALL.match(name) or name in _POSITIONAL_STEPS for name in facts.called):
            return False
        for loop in facts.nodes(ast.For):
            if not isinstance(loop.target, ast.Name) or not isinstance(loop.iter, (ast.Call, ast.Name)):  # type: ignore[attr-defined]
                continue
            var = loop.target.id  # type: ignore[attr-defined]
            for node in ast.walk(loop):
                if isinstance(node, ast.Call) and any(ACCOUNTANT_CALL.match(n) or n in _POSITIONAL_STEPS
                                                      for n in facts.call_lasts(node)):
                    args = [*node.args, *(k.value for k in node.keywords)]
                    if any(isinstance(n, ast.Name) and n.id == var for a in args for n in ast.walk(a)):
                        return True
        return False

    VALID = (
        # (h46-2 twin) the callback counts the finished epoch
        """
import tensorflow as tf
from privacy_utils import compute_epsilon
class EpsilonLogger(tf.keras.callbacks.Callback):
    def __init__(self, n_train, cfg):
        self.n_train, self.cfg = n_train, cfg
    def on_epoch_end(self, epoch, logs=None):
        eps, _ = compute_epsilon(self.n_train, self.cfg, epoch + 1)
        logs["epsilon"] = eps
""",
        # ordinary ML code: a callback logging the epoch index with a learning-rate schedule
        """
import tensorflow as tf
class LrLogger(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        lr = self.model.optimizer.learning_rate
        print(epoch, float(lr), logs.get("loss"))
""",
        # twin: the epochs the σ search is given are the epochs run
        # (h44-2 twin) both functions compute the same count; an unrelated loop over eval batches
        """
import math
class Trainer:
    def __init__(self, users, rate, epochs, delta, epsilon):
        self.users, self.rate, self.epochs, self.delta, self.epsilon = users, rate, epochs, delta, epsilon
    def _noise_multiplier(self):
        steps_per_epoch = max(1, int(len(self.users) * self.rate))
        total = steps_per_epoch * self.epochs
        return math.sqrt(2 * total * math.log(1.25 / self.delta)) / self.epsilon
    def train(self):
        for epoch in range(self.epochs):
            steps_per_epoch = max(1, int(len(self.users) * self.rate))
            for step in range(steps_per_epoch):
                self.training_step(step)
    def evaluate(self, loader):
        eval_steps = len(loader)
        for step in range(eval_steps):
            self.eval_step(step)
""",
        """
from opacus.accountants.utils import get_noise_multiplier
def train(model, optimizer, loader, epochs, q, target_eps, delta):
    sigma = get_noise_multiplier(target_epsilon=target_eps, target_delta=delta, sample_rate=q, epochs=epochs)
    for epoch in range(1, epochs + 1):
        for x, y in loader:
            optimizer.step()
""",
        # twin of the vertical-FL party: the epoch counter stops before the calibrated count
        """
def fit(self, batches, model):
    iteration = 0
    while iteration < self.e:
        for batch in batches:
            loc, sigma = model.gaussian(self.delta, self.epsilon, self.L, self.e, int(self.e * self.r))
            self.w -= self.lr * (model.grad(batch, self.w) + np.random.normal(loc, sigma, self.w.shape))
        iteration += 1
""",
        # a counter from 1 up to and including the bound: e passes
        """
def fit(self, batches, model):
    iteration = 1
    while iteration <= self.e:
        sigma = model.gaussian(self.delta, self.epsilon, self.e)
        self.w -= self.lr * (model.grad(batches, self.w) + np.random.normal(0, sigma, self.w.shape))
        iteration += 1
""",
        # ordinary training: a tolerance loop and an epsilon of numerical stability
        """
def train(model, data, max_epochs, eps=1e-8):
    epoch = 0
    while epoch <= max_epochs:
        loss = model.step(data, eps=eps)
        epoch += 1
    return loss
""",
        # twin of dp_cgans: the progress bar counts epochs from 1
        """
from tqdm import tqdm
def fit(self, train_data, epochs, sigma, q, orders):
    steps_per_epoch = max(len(train_data) // self.batch_size, 1)
    epoch_iterator = tqdm(range(1, epochs + 1), disable=not self.verbose)
    for i in epoch_iterator:
        for _ in range(steps_per_epoch):
            self.optimizerD.step()
        rdp = compute_rdp(q=q, noise_multiplier=sigma, steps=i * steps_per_epoch, orders=orders)
""",
        # an iterator name bound twice: which one the loop runs over is not known
        """
def fit(self, epochs, sigma, q, orders, resume):
    it = range(epochs)
    if resume:
        it = range(self.start, epochs)
    for i in it:
        self.optimizer.step()
        rdp = compute_rdp(q=q, noise_multiplier=sigma, steps=i, orders=orders)
""",
        # the count includes the step just taken
        """
def train(self, epochs, num_batches):
    for epoch in range(epochs):
        for idx in range(num_batches):
            self.sess.run(self.d_optim)
            eps = self.compute_epsilon(epoch * num_batches + idx + 1)
""",
        # queried before the step: idx steps have been taken
        """
def train(model, loader, steps, sigma, q, orders):
    for it in range(steps):
        eps = get_privacy_spent(orders, compute_rdp(q, sigma, it, orders), target_delta=1e-5)
        model.step(next(loader))
""",
        # a loop from 1
        """
def train(model, steps, sigma, q, orders):
    for it in range(1, steps + 1):
        model.step()
        rdp = compute_rdp(q=q, noise_multiplier=sigma, steps=it, orders=orders)
""",
        # a counter incremented with the step
        """
def train(model, epochs, batches, accountant):
    done = 0
    for epoch in range(epochs):
        for b in batches:
            model.step(b)
            done += 1
        eps = accountant.compute_epsilon(done)
""",
        # the configured count + 1 iterations, and the accountant charges the same + 1
        """
def main(args, netD, netG, sigma, q, orders):
    for it in range(args.iterations + 1):
        netD.dp_step(sigma)
        netG.train_step()
    return compute_rdp(q, sigma, args.iterations + 1, orders)
""",
        # a loop from 1 to the configured count inclusive: exactly iterations updates
        """
def main(args, netD, sigma):
    for it in range(1, args.iterations + 1):
        netD.dp_step(sigma)
        netD.backward()
""",
        # + 1 over a local bound (a count of batches), not the configured step count
        """
def run(model, batches, sigma):
    n = len(batches) - 1
    for i in range(n + 1):
        model.train_step(batches[i], sigma)
""",
        # (h47) twin: the accountant is given k + 1 after the update of iteration k
        """
def compute_epsilon(steps, batch_size, n, delta=1e-5, sigma=1.1):
    rdp = compute_rdp(batch_size / n, sigma, steps, ORDERS)
    return get_privacy_spent(ORDERS, rdp, target_delta=delta)[0]

def run(cfg, state, batches, n):
    for k in range(cfg.total_steps):
        xb, yb = next(batches)
        state = opt_update(k, noisy_grad(get_params(state), xb, yb, cfg.clip, cfg.sigma), state)
        if k % cfg.log_every == 0:
            eps = compute_epsilon(k + 1, cfg.batch_size, n, cfg.delta, cfg.sigma)
            print(k, eps)
    return state
""",
        # (h47) twin: epsilon computed before the iteration's update (k steps taken so far)
        """
def compute_epsilon(steps, batch_size, n, delta=1e-5, sigma=1.1):
    rdp = compute_rdp(batch_size / n, sigma, steps, ORDERS)
    return get_privacy_spent(ORDERS, rdp, target_delta=delta)[0]

def run(cfg, state, batches, n):
    for k in range(cfg.total_steps):
        if k % cfg.log_every == 0:
            print(k, compute_epsilon(k, cfg.batch_size, n, cfg.delta, cfg.sigma))
        xb, yb = next(batches)
        state = opt_update(k, noisy_grad(get_params(state), xb, yb, cfg.clip, cfg.sigma), state)
    return state
""",
        # (h47) ordinary ML: a learning-rate schedule of the step index after an optimizer update
        """
def lr_at(steps, base, warmup):
    return base * min(1.0, (steps + 1) / warmup)

def fit(state, batches, total):
    for k in range(total):
        state = opt_update(k, grad_fn(get_params(state), next(batches)), state)
        lr = lr_at(k, 0.1, 100)
    return state
""",
    )

    INVALID = (
        # (h46-2) a Keras callback hands its 0-based epoch index to the accountant as the epochs trained
        """
import tensorflow as tf
from privacy_utils import compute_epsilon
class EpsilonLogger(tf.keras.callbacks.Callback):
    def __init__(self, n_train, cfg):
        self.n_train, self.cfg = n_train, cfg
    def on_epoch_end(self, epoch, logs=None):
        eps, _ = compute_epsilon(self.n_train, self.cfg, epoch)  # <-
        logs["epsilon"] = eps
""",
        # σ searched for `epochs` epochs, the loop runs one more
        # (h44-2) the step count recomputed in the training loop with another floor than the calibration used
        """
import math
class Trainer:
    def __init__(self, users, rate, epochs, delta, epsilon):
        self.users, self.rate, self.epochs, self.delta, self.epsilon = users, rate, epochs, delta, epsilon
    def _noise_multiplier(self):
        steps_per_epoch = max(1, int(len(self.users) * self.rate))
        total = steps_per_epoch * self.epochs
        return math.sqrt(2 * total * math.log(1.25 / self.delta)) / self.epsilon
    def train(self):
        for epoch in range(self.epochs):
            steps_per_epoch = max(5, int(len(self.users) * self.rate))  # <-
            for step in range(steps_per_epoch):
                self.training_step(step)
""",
        """
from opacus.accountants.utils import get_noise_multiplier
def train(model, optimizer, loader, epochs, q, target_eps, delta):
    sigma = get_noise_multiplier(target_epsilon=target_eps, target_delta=delta, sample_rate=q, epochs=epochs)
    for epoch in range(epochs + 1):  # <-
        for x, y in loader:
            optimizer.step()
""",
        # a vertical-FL party: the noise is calibrated for e epochs, the loop runs e + 1
        """
def fit(self, batches, model):
    iteration = 0
    while iteration <= self.e:  # <-
        for batch in batches:
            loc, sigma = model.gaussian(self.delta, self.epsilon, self.L, self.e, int(self.e * self.r))
            self.w -= self.lr * (model.grad(batch, self.w) + np.random.normal(loc, sigma, self.w.shape))
        iteration += 1
""",
        # DP-CGAN: the step of iteration idx has run, idx steps are charged
        """
def train(self, epochs, num_batches):
    for epoch in range(epochs):
        for idx in range(num_batches):
            self.sess.run([self.d_optim, self.d_loss])
            eps = self.compute_epsilon((epoch * num_batches) + idx)  # <-
            if eps > self.target_eps:
                break
""",
        # compute_rdp with the loop index as steps, after the update
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
def train(model, data, steps, sigma, q, orders):
    for it in range(steps):
        loss = model.loss(data.next())
        loss.backward()
        rdp = compute_rdp(q=q, noise_multiplier=sigma, steps=it, orders=orders)  # <-
""",
        # epochs counted from 0 after each epoch's training
        """
def run(model, loader, epochs, sigma, q, delta):
    for epoch in range(epochs):
        for x, y in loader:
            model.train_step(x, y)
        eps = compute_epsilon(steps=epoch * len(loader), noise_multiplier=sigma, q=q, delta=delta)  # <-
        print(epoch, eps)
""",
        # tf-privacy's analysis with the loop index as the step count, after a training helper
        """
def train(model, data, iters, q, sigma, orders, delta):
    for iter in range(iters):
        loss = train_dynamic_add_noise(model, data.next())
        eps, _ = apply_dp_sgd_analysis(q, sigma, iter, orders, delta)  # <-
""",
        # dp_cgans: the epoch loop runs over a progress bar bound earlier to a 0-based range
        """
from tqdm import tqdm
def fit(self, train_data, epochs, sigma, q, orders):
    steps_per_epoch = max(len(train_data) // self.batch_size, 1)
    epoch_iterator = tqdm(range(epochs), disable=not self.verbose)
    for i in epoch_iterator:
        for _ in range(steps_per_epoch):
            self.optimizerD.step()
        rdp = compute_rdp(q=q, noise_multiplier=sigma, steps=i * steps_per_epoch, orders=orders)  # <-
""",
        # tqdm over range
        """
from tqdm import tqdm
def fit(self, n_iter):
    for i in tqdm(range(n_iter)):
        self.optimizer.step()
        self.eps = self.accountant.get_privacy_spent(steps=i)  # <-
""",
        # GS-WGAN: iterations + 1 generator updates; privacy_analysis.py charges n_steps = iterations
        """
import numpy as np
def main(args, netD_list, netG, optimizerG):
    global dynamic_hook_function
    dynamic_hook_function = dp_conv_hook  # clip and noise the generator's gradient
    for netD in netD_list:
        netD.conv1.register_backward_hook(master_hook_adder)
    for iter in range(args.iterations + 1):  # <-
        netD_id = np.random.randint(len(netD_list), size=1)[0]
        G_cost = netG.loss(netD_list[netD_id])
        G_cost.backward()
        optimizerG.step()
""",
        # tqdm over range(0, FLAGS.max_steps + 1), and compute_rdp charges FLAGS.max_steps
        """
from tqdm import tqdm
def train(model, q, sigma, orders):
    for step in tqdm(range(0, FLAGS.max_steps + 1)):  # <-
        model.train_step(sigma)
    rdp = compute_rdp(q=q, noise_multiplier=sigma, steps=FLAGS.max_steps, orders=orders)
    return get_privacy_spent(orders, rdp, target_delta=1e-5)
""",
        # (h47) a local compute_epsilon(steps, batch_size, ...) given the 0-based index after a jax opt_update
        """
def compute_epsilon(steps, batch_size, n, delta=1e-5, sigma=1.1):
    rdp = compute_rdp(batch_size / n, sigma, steps, ORDERS)
    return get_privacy_spent(ORDERS, rdp, target_delta=delta)[0]

def run(cfg, state, batches, n):
    for k in range(cfg.total_steps):
        xb, yb = next(batches)
        state = opt_update(k, noisy_grad(get_params(state), xb, yb, cfg.clip, cfg.sigma), state)
        if k % cfg.log_every == 0:
            eps = compute_epsilon(k, cfg.batch_size, n, cfg.delta, cfg.sigma)  # <-
            print(k, eps)
    return state
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """(h46-2) A Keras/TF callback ``on_epoch_end(self, epoch, logs)``: Keras passes the 0-based index of the
        epoch that has just finished, so ``epoch`` handed as is to an accountant counts one epoch fewer than were
        trained (``compute_epsilon(n, cfg, epoch)``)."""
        if node.name.value != "on_epoch_end":
            return
        params = [p.name.value for p in node.params.params]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        if not params:
            return
        index = params[0]
        fa = self.ctx.analysis
        for call in walk(node.body, into_scopes=False):
            if not (isinstance(call, cst.Call) and ACCOUNTANT_CALL.match(call_name(call))):
                continue
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.value.value == index:
                    self.report(arg.value, f"`{index}` of `on_epoch_end` is the 0-based index of the epoch that has "
                                           f"just been trained, and `{call_name(call)}` is given it as the number of "
                                           f"epochs: the ε reported omits one epoch; pass `{index} + 1`")
                    return

    def visit_For(self, node: cst.For) -> None:
        """``for it in range(args.iterations + 1)`` around a training step: iterations + 1 updates, while an
        accountant given the configured ``iterations`` charges one fewer."""
        bound = _plus_one_bound(node)
        if bound is None:
            self._recomputed_count(node)
            return
        fa = self.ctx.analysis
        if not _configured_steps(bound):
            fn = fa.enclosing_function(node)
            calibration = _calibrated_with(fn, fa.code(bound).strip()) \
                if fn is not None and isinstance(bound, (cst.Name, cst.Attribute)) else None
            if calibration is None or not any(isinstance(n, cst.Call) and _trains(call_name(n)) for n in walk(node.body)):
                return
            text = fa.code(bound).strip()
            self.report(node.iter, f"this loop runs `{text} + 1` passes, but `{call_name(calibration)}` on line "
                                   f"{fa.line_of(calibration)} calibrates the noise for `{text}`: one pass more than the "
                                   f"ε accounts for; loop `range({text})`")
            return
        if not any(isinstance(n, cst.Call) and _trains(call_name(n)) and ident(n.func) is not None
                   for n in walk(node.body)):
            return
        text = fa.code(bound).strip()
        charged = []
        for call in walk(self.ctx.module):
            if isinstance(call, cst.Call) and (ACCOUNTANT_CALL.match(call_name(call)) or call_name(call) in _POSITIONAL_STEPS):
                steps = self._steps_argument(call, call_name(call))
                if steps is not None:
                    charged.append((call, steps))
        if any(text not in fa.code(steps) or _adds_one(steps) for _, steps in charged):
            return  # this module's accountant charges something else (a counter, E + 1): it speaks for itself
        where = (f"`{call_name(charged[0][0])}` on line {fa.line_of(charged[0][0])} charges `{text}`" if charged
                 else f"an accountant given the configured `{text}` charges that many")
        self.report(node.iter, f"this loop runs `{text} + 1` training iterations, but {where}: one update more than the "
                               f"ε accounts for; loop `range({text})` (or charge `{text} + 1` steps)")

    def _recomputed_count(self, node: cst.For) -> None:
        """(h44-2) ``for step in range(steps_per_epoch)`` around a training step, with ``steps_per_epoch``
        worked out here by another formula than the one the noise calibration uses for the same name in
        another function (``max(5, int(n * q))`` here, ``max(1, int(n * q))`` where σ is computed): the loop
        runs a different number of noisy steps from the number the σ was calibrated for."""
        it = node.iter
        if not (isinstance(it, cst.Call) and call_name(it) == "range" and len(it.args) == 1
                and isinstance(it.args[0].value, cst.Name)):
            return
        name = it.args[0].value.value
        if not words(name) & {"steps", "iterations", "iters", "updates", "batches"}:
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not any(isinstance(n, cst.Call) and (_trains(call_name(n)) or words(call_name(n)) & {
                "training", "train_step", "step"}) for n in walk(node.body)):
            return
        here = [a.value for a in walk(fn.body) if isinstance(a, cst.Assign) and len(a.targets) == 1
                and ident(a.targets[0].target) == name]
        if len(here) != 1:
            return
        mine = " ".join(fa.code(here[0]).split())
        refs = {ident(n) for n in walk(here[0]) if isinstance(n, cst.Attribute)} - {None}
        if not refs:
            return
        for other in walk(self.ctx.module):
            if not isinstance(other, cst.FunctionDef) or other is fn or not words(other.name.value) & {
                    "noise", "sigma", "multiplier", "epsilon", "privacy", "accountant", "accounting", "calibrate"}:
                continue
            theirs = [a.value for a in walk(other.body) if isinstance(a, cst.Assign) and len(a.targets) == 1
                      and ident(a.targets[0].target) == name]
            if len(theirs) != 1:
                continue
            text = " ".join(fa.code(theirs[0]).split())
            if text == mine or {ident(n) for n in walk(theirs[0]) if isinstance(n, cst.Attribute)} - {None} != refs:
                continue
            self.report(here[0], f"`{name} = {mine}` here, but `{other.name.value}` (line {fa.line_of(theirs[0])}) "
                                 f"calibrates the noise for `{name} = {text}`: the loop runs another number of noisy "
                                 "steps than the σ accounts for; compute the step count once and use it for both")
            return

    def visit_While(self, node: cst.While) -> None:
        """``it = 0; while it <= self.e: …; it += 1`` runs e + 1 epochs, while the noise in the loop is calibrated
        for ``self.e`` epochs (``gaussian(δ, ε, …, self.e, int(self.e * self.r))``)."""
        test = node.test
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.LessThanEqual) and isinstance(test.left, cst.Name)):
            return
        var, bound = test.left.value, test.comparisons[0].comparator
        if not isinstance(bound, (cst.Name, cst.Attribute)) or number(bound) is not None:
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not _starts_at_zero(fn, node, var) or not _steps_by_one(node, var):
            return
        text = fa.code(bound).strip()
        calibration = _calibrated_with(fn, text)
        if calibration is None:
            return
        self.report(node.test, f"`while {var} <= {text}` from {var} = 0 runs `{text} + 1` passes, but the noise is "
                               f"calibrated for `{text}` (`{call_name(calibration)}` on line {fa.line_of(calibration)}): "
                               f"one pass more than the ε accounts for; loop `while {var} < {text}`")

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if not (ACCOUNTANT_CALL.match(name) or name in _POSITIONAL_STEPS):
            return
        steps = self._steps_argument(node, name)
        if steps is None:
            steps = self._local_steps_argument(node, name)
        if steps is None or _adds_one(steps):
            return
        fa = self.ctx.analysis
        for loop in fa.enclosing_loops(node):
            if not isinstance(loop, cst.For):
                continue
            var = _loop_variable(loop, fa.enclosing_function(loop))
            if var is None:
                continue
            if not any(isinstance(n, cst.Name) and n.value == var for n in walk(steps)):
                continue
            if not self._step_before(loop, node):
                return
            self.report(
                node,
                f"`{fa.code(steps).strip()}` counts the steps from the 0-based loop variable `{var}` after this "
                f"iteration's update ran: the accountant is charged one step fewer than were taken, so the ε "
                f"reported (and any stop on the budget) is too small; charge `{var} + 1`",
            )
            return

    @staticmethod
    def _steps_argument(call: cst.Call, name: str) -> cst.BaseExpression | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in _STEP_KEYWORDS:
                return arg.value
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if len(positional) == 1 and words(name) & {"epsilon", "eps", "privacy", "spent"}:
            return positional[0]
        if name in _POSITIONAL_STEPS and len(positional) > _POSITIONAL_STEPS[name]:
            return positional[_POSITIONAL_STEPS[name]]
        return None

    def _local_steps_argument(self, call: cst.Call, name: str) -> cst.BaseExpression | None:
        """(h47) ``compute_epsilon(s, batch_size, n_train, delta, sigma)`` with ``def compute_epsilon(steps,
        batch_size, …)`` in this module: the argument bound to the definition's steps-named parameter."""
        last = name.split(".")[-1]
        defs = [fn for fn in self.ctx.module.body if isinstance(fn, cst.FunctionDef) and fn.name.value == last]
        if len(defs) != 1 or "." in name:
            return None
        params = [p.name.value for p in (*defs[0].params.posonly_params, *defs[0].params.params)]
        index = next((i for i, p in enumerate(params) if p in _STEP_KEYWORDS
                      or words(p) & {"steps", "iterations", "iters"}), None)
        if index is None:
            return None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == params[index]:
                return arg.value
        positional = [a.value for a in call.args if a.keyword is None]
        if any(a.star for a in call.args) or len(positional) <= index:
            return None
        return positional[index]

    def _step_before(self, loop: cst.For, call: cst.Call) -> bool:
        """Does the loop body take a training step before ``call`` (in source order)?"""
        fa = self.ctx.analysis
        line = fa.line_of(call)
        for node in walk(loop.body):
            if node is call:
                break
            if isinstance(node, cst.Call) and (_trains(call_name(node)) or _optimizer_update(call_name(node))) \
                    and fa.line_of(node) < line:
                if ident(node.func) is not None and not words(call_name(node)) & {"epsilon"}:
                    return True
        return False


def _trains(name: str) -> bool:
    """A training step: ``backward``/``step``/``run``…, or a helper named for training
    (``train_dynamic_add_noise``, ``local_train``), not for testing."""
    pieces = words(name)
    return name in _TRAIN_CALLS or ("train" in pieces and not pieces & {"test", "eval", "valid", "validation"})


def _optimizer_update(name: str) -> bool:
    """(h47) an optimizer update under another name: jax's ``opt_update(i, grads, state)``,
    ``optimizer_update``, ``apply_updates``."""
    pieces = words(name.split(".")[-1])
    return bool(pieces & {"update", "updates"} and pieces & {"opt", "optimizer", "apply", "params", "sgd", "private"})
