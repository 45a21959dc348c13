"""DP307: a privacy guarantee claimed for a path that adds no noise."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, param_names, subscripted_name, walk, words
from dpcheck.analysis.vocabulary import ACCOUNTANT_CALL, NOISE_DRAWS
from dpcheck.rule import Rule

#: parameters that carry the privacy budget itself: a function taking one promises to spend it
_BUDGET_PARAMS = frozenset({
    "epsilon", "eps", "dp_epsilon", "target_epsilon", "target_eps", "privacy_budget", "epsilon_budget",
    "noise_multiplier",
})
#: the other privacy parameters: any of them read means the function does something private
_PRIVACY_PARAMS = _BUDGET_PARAMS | frozenset({
    "delta", "dp_delta", "target_delta", "sigma", "noise_scale", "noise_std", "clip", "clip_norm",
    "max_grad_norm", "l2_norm_clip", "clipping_norm", "sensitivity", "mechanism", "dp_mechanism",
})
#: calls that take a training step: the function trains (or fits) a model on the data
_TRAIN_STEPS = frozenset({"backward", "step", "minimize", "apply_gradients", "train_on_batch", "fit", "partial_fit"})
#: a non-private variant may take (and ignore) the same parameters as its private sibling
_NON_PRIVATE = frozenset({"nonprivate", "non", "nodp", "nondp", "baseline", "plain", "vanilla", "without", "public"})
#: reads of a noised value that only measure it (its norm for a bound, its size, a log line)
_MEASURES = frozenset({"norm", "len", "print", "size", "shape", "item", "numel", "append"})
_NOISE = NOISE_DRAWS - {"sample", "rvs", "exponential"}
#: configuration keys whose True (or, for the second set, False) turns the noise off
_NOISE_OFF_KEYS = frozenset({"nonprivate", "non_private", "no_dp", "nodp", "disable_dp", "no_privacy"})
_NOISE_ON_KEYS = frozenset({"dp", "private", "use_dp", "differential_privacy", "add_noise", "privacy"})
#: statistics of a sample: of n noise draws they are nearly constants (std ≈ √2·b for Laplace, mean ≈ 0)
_STATISTICS = frozenset({"std", "var", "mean"})
#: in-place parameter updates
_UPDATES = frozenset({"add_", "sub_", "step", "apply_gradients", "copy_"})


def _ast_ignored_budget(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``fn`` takes a budget parameter, reads none of its privacy parameters and takes a training step."""
    args = fn.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    if args.kwarg is not None or not names & _BUDGET_PARAMS:
        return False
    read = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if read & names & _PRIVACY_PARAMS:
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name))
               and (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id) in _TRAIN_STEPS
               for n in ast.walk(fn))


def _ast_noise_statistic(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``np.std(noise)`` of a name the function assigns a noise draw to."""
    drawn = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and _ast_has_draw(n.value)
             for t in n.targets if isinstance(t, ast.Name)}
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _STATISTICS
               and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id in drawn for n in ast.walk(fn))


def _ast_membership_branch(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``if i in sample: <noise> else: <update>``."""
    return any(isinstance(n, ast.If) and n.orelse and isinstance(n.test, ast.Compare)
               and any(isinstance(op, (ast.In, ast.NotIn)) for op in n.test.ops)
               and any(_ast_has_draw(b) for b in (*n.body, *n.orelse)) for n in ast.walk(fn))


def _ast_has_draw(expr: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _NOISE
               for n in ast.walk(expr))


#: a value named as the noised release
_NOISED_WORDS = frozenset({"noised", "noisy", "perturbed", "privatized", "privatised", "sanitized", "sanitised"})


def _draws_noise(expr: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and call_name(n) in _NOISE
               for n in walk(expr))


#: names of a DP noise scale: a draw scaled by one is privacy noise, not a random data set
_SCALE_WORDS = frozenset({"eps", "epsilon", "sigma", "sensitivity", "delta", "privacy", "noise", "multiplier", "lap",
                          "laplace", "rho", "mu", "budget", "clip", "std"})


def _dp_scaled(expr: cst.CSTNode) -> bool:
    """Does ``expr`` read a DP-named value (``eps``, ``sigma``, ``noise_multiplier``, ``self.sensitivity``)?
    A keyword (``scale=``) or a called attribute (``np.clip``) is not a value read."""
    labels = {id(n.keyword) for n in walk(expr) if isinstance(n, cst.Arg) and n.keyword is not None}
    labels |= {id(n.attr) for n in walk(expr) if isinstance(n, cst.Attribute)
               and not (isinstance(n.value, cst.Name) and n.value.value == "self")}
    return any(isinstance(n, cst.Name) and id(n) not in labels and words(n.value) & _SCALE_WORDS
               for n in walk(expr))


def _sum(expr: cst.BaseExpression) -> bool:
    """``x + noise``: the value is something noised, not the noise itself."""
    return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Add) for n in walk(expr))


def _clips(body: cst.CSTNode) -> bool:
    """A norm bound in ``body``: ``grad / max(1, norm / C)``, ``clip_grad_norm_``, ``clamp``."""
    return any(isinstance(n, cst.Call) and (call_name(n) in ("norm", "clip", "clamp", "clip_by_norm", "clip_grad_norm_")
                                            or "clip" in words(call_name(n))) for n in walk(body))


def _updates(body: cst.CSTNode) -> cst.CSTNode | None:
    """The first parameter update in ``body``: ``p.data.add_(…)``, ``optimizer.step()``, ``p.data -= …``."""
    for n in walk(body):
        if isinstance(n, cst.Call) and call_name(n) in _UPDATES and isinstance(n.func, cst.Attribute):
            return n
        if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Attribute) and n.target.attr.value == "data":
            return n
    return None


class NoNoisePath(Rule):
    id = "DP307"
    name = "no-noise-path"
    category = "general"
    severity = "error"
    summary = "a DP guarantee for a path that adds no noise: budget accepted and ignored, noised copy discarded, raw updates beside noised ones, noise replaced by its std, ε of a noise-off config"
    rationale = (
        "A guarantee holds for the computation that ran, not for the parameters it was given. "
        "Five spellings of a DP path that adds no noise: (1) a training function takes the privacy "
        "budget (`epsilon`, `noise_multiplier`; with `delta`, `sigma`, a clip norm) and its caller "
        "passes one, but the body reads none of them — it trains with plain gradient steps, no "
        "clipping and no noise — so every result labelled with that ε (\"DP-FedAvg ε=…\") is "
        "non-private; (2) a noised copy is built (`s = deepcopy(params); s[k] = params[k] + "
        "noise`) and then only measured or updated in place — never returned, loaded or stepped "
        "— while the model keeps the original values, so the noise protects nothing; (3) "
        "`if i in sample:` a clipped, noised update `else:` the raw gradient steps the model; (4) "
        "the std or mean of a noise sample (`np.std(noise)`, nearly a constant) stands in for the "
        "noise; (5) an ε is computed from a configuration whose noise switch is off "
        "(`'nonprivate': True`, `'use_dp': False`) and printed as the component's guarantee. "
        "Not reported: functions with `**kwargs` (pass-through), abstract or stub bodies, methods "
        "of classes with a base (interfaces), functions or classes named non-private "
        "(`nonprivate`, `baseline`, `vanilla`…), functions no call in the module hands the budget "
        "to, a function reading any of its privacy parameters, a noised value read anywhere "
        "(including a closure), draws not scaled by a DP-named value (random test data), a sample "
        "centred by its own mean, a mode switch (`if mode in (\"dp\", …)`), code with no DP context "
        "(an optimizer's `eps` tolerance). "
        "Fix: clip and noise inside the function that takes the budget (or drop the DP label), "
        "and use the noised copy — return it or load it — instead of the original."
        " A noise draw stored in a local that is never read, beside a value named as noised (`noised_grads = "
        "summed_grads  # + noise`), is reported too."
    )
    TRIGGERS = ("eps", "noise", "normal(", "laplace(", "randn")
    #: checked in ``leave_Module``: a branch that clips and noises is DP code whatever its module says
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a function taking a budget parameter, reading none of its privacy
        parameters and taking a training step, called in the file; or a function storing the sum
        of something and a noise draw (``normal``/``laplace``/``randn``…) in a name it never uses."""
        from dpcheck.analysis.astshapes import discarded_noise

        context = facts.may_have_dp_context
        if context and any(isinstance(node.value, ast.Dict) and any(  # type: ignore[attr-defined]
                isinstance(k, ast.Constant) and str(k.value).lower() in _NOISE_OFF_KEYS | _NOISE_ON_KEYS
                for k in node.value.keys) for node in facts.nodes(ast.Assign)):  # type: ignore[attr-defined]
            return True  # a configuration with a noise switch (checked against the ε computed from it)
        # the three draw shapes need a draw in the function: only functions holding one are walked for them
        drawing = facts.functions_holding([c for c in facts.calls if isinstance(c.func, ast.Attribute)
                                           and c.func.attr in _NOISE])
        for fn in facts.functions:
            if id(fn) in drawing and (_ast_membership_branch(fn) or context and (
                    discarded_noise(facts, fn, _NOISE, _MEASURES) or _ast_noise_statistic(fn))):
                return True
            if context and fn.name in facts.called and _ast_ignored_budget(fn):
                return True
        return False

    VALID = (
        # twins: the drawn noise reaches the value named as noised
        """
import numpy as np
def release(counts, epsilon, sensitivity):
    noise = np.random.laplace(0, sensitivity / epsilon, len(counts))
    noisy_counts = counts.copy()
    noisy_counts += noise
    return noisy_counts
""",
        """
import torch
def private_grad(grads, clip, sigma):
    summed = torch.stack(grads).sum(0)
    noise = torch.normal(0, sigma * clip, summed.shape)
    perturbed = summed.add(noise)
    return perturbed / len(grads)
""",
        """
import numpy as np
def sanitize(vec, noise_multiplier, l2_clip, epsilon):
    gauss = np.random.randn(*vec.shape) * noise_multiplier * l2_clip
    sanitized = vec / max(1, np.linalg.norm(vec) / l2_clip)
    return sanitized + gauss
""",
        # the budget is spent: clipping and noise in the training step
        """
import torch
def train_client(loader, model, epochs, delta, epsilon):
    sigma = (2 * torch.log(torch.tensor(1.25 / delta))).sqrt() / epsilon
    for epoch in range(epochs):
        for data, target in loader:
            loss = model.loss(data, target)
            loss.backward()
            for p in model.parameters():
                p.grad += torch.randn_like(p.grad) * sigma
            model.step()
    return model
def run(loaders, model, epsilon, delta):
    return [train_client(l, model, 1, delta, epsilon) for l in loaders]
""",
        # a non-private baseline with the private variant's signature
        """
def train_nonprivate(loader, model, epochs, epsilon):
    for data, target in loader:
        model.loss(data, target).backward()
        model.step()
    return model
def run(loader, model, epsilon):
    return train_nonprivate(loader, model, 1, epsilon)
""",
        # an optimizer's eps tolerance in ordinary training code, passed through **kwargs
        """
import torch
def train(model, loader, lr, eps, **kwargs):
    opt = torch.optim.Adam(model.parameters(), lr=lr, **kwargs)
    for x, y in loader:
        model.loss(x, y).backward()
        opt.step()
def main(model, loader, noise_std):
    x = loader.dataset + torch.randn(3) * noise_std
    return train(model, loader, 1e-3, 1e-8), x
""",
        # the noised copy is loaded into the model
        """
import copy
import numpy as np
import torch
def dp_step(model, sigma, C):
    params = model.state_dict()
    noisy = copy.deepcopy(params)
    for k in params.keys():
        noisy[k] = params[k] + torch.from_numpy(np.random.normal(0, sigma, params[k].size())).float()
    model.load_state_dict(noisy)
""",
        # the noised value is returned
        """
import numpy as np
def release(counts, epsilon):
    noisy = counts + np.random.laplace(0, 1 / epsilon, len(counts))
    noisy = np.clip(noisy, 0, None)
    return noisy
""",
        # an interface method: the subclass implements it
        """
class Trainer(Base):
    def train(self, loader, epsilon):
        for x in loader:
            self.model.loss(x).backward()
            self.opt.step()
def run(trainer, loader):
    return trainer.train(loader, 1.0)
""",
        # a mode switch, not a sample: the non-DP mode is a plain step by design
        """
import torch
def step(model, lr, mode, sigma, C):
    for p in model.parameters():
        if mode in ("dp", "private"):
            g = p.grad / max(1, torch.norm(p.grad) / C)
            p.data.add_(-lr, g + torch.normal(0, sigma * C, size=g.shape))
        else:
            p.data.add_(-lr, p.grad)
""",
        # a non-private configuration next to a private one; ε is computed only for the private one
        """
ae_params = {'nonprivate': True, 'minibatch_size': 64}
gan_params = {'nonprivate': False, 'noise_multiplier': 1.1, 'minibatch_size': 64, 'iterations': 100}
print('Achieves ({}, {})-DP'.format(analysis.epsilon(60000, gan_params['minibatch_size'],
      gan_params['noise_multiplier'], gan_params['iterations'], 1e-5), 1e-5))
""",
        # the std of the noise logged, the noise itself added
        """
import numpy as np
def noisy_scale(scale, eps, n):
    noise = np.random.laplace(0, 1 / eps, size=n)
    print("noise std", np.std(noise))
    return scale + noise[0]
""",
        # a test: the sample's statistics are only compared with the expected law
        """
import numpy as np
def test_noise_calibration(sigma, clip, batch_size):
    expected = sigma * clip / batch_size
    reference = expected * np.random.normal(size=(1000, 10))
    ref_std = np.std(reference, axis=0)
    np.testing.assert_allclose(ref_std, expected, rtol=0.1)
""",
        # simulated data (clipped by `np.clip`, keyword `scale=`): its variance is a baseline, not noise
        """
import numpy as np
def compare(sizes, eps_list):
    for size in sizes:
        data = np.clip(np.random.normal(loc=0.2, scale=0.3, size=size), a_min=-1, a_max=1)
        var_base = np.var(data)
        for epsilon in eps_list:
            print(epsilon, var_base)
""",
        # diffprivlib's tests: a random data set centred by its own mean
        """
import numpy as np
def test_pca_dp(epsilon):
    X = np.random.randn(5000, 21)
    X -= np.mean(X, axis=0)
    return DPPCA(epsilon=epsilon).fit(X)
""",
        # tf-privacy's tests: noisy labels read by a closure
        """
import numpy as np
def test_estimator(noise_multiplier):
    train_data = np.random.normal(scale=3.0, size=(1000, 4))
    train_labels = train_data @ np.ones((4, 1)) + np.random.normal(scale=noise_multiplier, size=(1000, 1))
    def train_input_fn():
        return (train_data, train_labels)
    return fit(train_input_fn)
""",
    )

    INVALID = (
        # the noise is drawn, but the value named as noised is assigned without it
        """
import numpy as np
def release(counts, epsilon, sensitivity):
    noise = np.random.laplace(0, sensitivity / epsilon, len(counts))  # <-
    noisy_counts = counts.copy()
    return noisy_counts
""",
        """
import torch
def private_grad(grads, clip, sigma):
    summed = torch.stack(grads).sum(0)
    noise = torch.normal(0, sigma * clip, summed.shape)  # <-
    perturbed = summed
    return perturbed / len(grads)
""",
        """
import numpy as np
def sanitize(vec, noise_multiplier, l2_clip, epsilon):
    gauss = np.random.randn(*vec.shape) * noise_multiplier * l2_clip  # <-
    sanitized = vec / max(1, np.linalg.norm(vec) / l2_clip)
    return sanitized
""",
        # DP-FedAvg: train_client takes epsilon and delta and never uses them; results labelled DP
        """
import torch.nn.functional as F
from torch import optim
def train_client(loader, model, epochs, delta, epsilon):  # <-
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for data, target in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(data), target)
            loss.backward()
            optimizer.step()
    return model
def run_fedavg(client_loaders, global_model, epsilon, delta):
    models = [train_client(loader, global_model, 1, delta, epsilon) for loader in client_loaders]
    print(f"DP-FedAvg eps={epsilon}")
    return models
""",
        # a method taking a noise multiplier by keyword, never reading it
        """
class LocalUpdate:
    def local_train(self, net, noise_multiplier=1.0, max_grad_norm=1.0):  # <-
        for x, y in self.loader:
            self.loss(net(x), y).backward()
            self.optimizer.step()
        return net.state_dict()
def round(clients, net, sigma):
    return [c.local_train(net, noise_multiplier=sigma) for c in clients]
""",
        # RDP-GAN: the noised and clipped copy is built, then the original weights are reloaded
        """
import copy
import numpy as np
import torch
def dp_discriminator_step(self, sigma, C):
    self.d_optimizer.zero_grad()
    d_loss.backward()
    d_parameters = self.discriminator.state_dict()
    s_noise = copy.deepcopy(d_parameters)
    bound = []
    for k in d_parameters.keys():
        noise = np.random.normal(0, sigma, d_parameters[k].size())
        noise = torch.from_numpy(noise).float()
        s_noise[k] = d_parameters[k] + noise  # <-
        bound.append(np.linalg.norm(s_noise[k]))
        if bound[-1] > C:
            s_noise[k] = s_noise[k] / bound[-1] * C
    self.discriminator.load_state_dict(d_parameters)
    self.d_optimizer.step()
""",
        # a noisy gradient computed, but the raw gradient is applied
        """
import torch
def private_step(params, grads, lr, noise_multiplier, clip):
    for p, g in zip(params, grads):
        g = g * min(1.0, clip / (g.norm() + 1e-6))
        noisy_g = g + torch.randn_like(g) * noise_multiplier * clip  # <-
        p.data -= lr * g
""",
        # DP-SGD-FL: examples outside the sampled set update the model with their raw gradient
        """
import torch
def update_weights(self, model, images, labels, rand_sample, L):
    for i, (image, label) in enumerate(zip(images, labels)):
        model.zero_grad()
        self.criterion(model(image), label).backward()
        if i in rand_sample:
            for param in model.parameters():
                grad = param.grad.detach().clone()
                grad_clipped = grad / max(1, torch.norm(grad) / self.C)
                grad_clipped += torch.normal(0, self.sigma, size=grad_clipped.shape)
                param.data.add_(-self.lr, grad_clipped / L)
        else:
            for param in model.parameters():
                param.data.add_(-self.lr, param.grad)  # <-
""",
        # the same with the branches swapped and an in-place subtraction
        """
import numpy as np
def sgd(w, grads, batch, lr, C, sigma):
    for i, g in enumerate(grads):
        if i not in batch:
            w.data -= lr * g  # <-
        else:
            g = np.clip(g, -C, C)
            w.data -= lr * (g + np.random.normal(0, sigma * C, g.shape))
""",
        # DPautoGAN: the autoencoder is trained with 'nonprivate': True, and its "(eps, delta)-DP" is printed
        """
ae_params = {
    'nonprivate': True,
    'noise_multiplier': 2.5,
    'minibatch_size': 64,
    'iterations': 20000,
    'delta': 1e-5,
}
train_autoencoder(X, **ae_params)
print('Achieves ({}, {})-DP'.format(
    analysis.epsilon(  # <-
        len(X), ae_params['minibatch_size'], ae_params['noise_multiplier'], ae_params['iterations'], ae_params['delta']
    ),
    ae_params['delta'],
))
""",
        # a config with use_dp False handed to compute_rdp
        """
config = {"use_dp": False, "sigma": 1.0, "q": 0.01, "steps": 1000}
train(model, config)
rdp = compute_rdp(config["q"], config["sigma"], config["steps"], orders)  # <-
""",
        # DP-SDV: the marginal scale replaced by the std of a Laplace sample (nearly a constant)
        """
import numpy as np
def fit_dp(self, data, eps):
    datum = self.get_parameters()
    for key in datum.keys():
        if 'scale' in key:
            noise = np.random.laplace(loc=0.0, scale=(1 / eps), size=data.shape[0])
            datum[key] = np.sqrt(np.square(np.std(noise)) + np.square(datum[key]))  # <-
    self.set_parameters(datum)
""",
        # the mean of a Gaussian sample added to a private mean: it is ≈ 0
        """
import numpy as np
def private_mean(x, epsilon, delta, sensitivity):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    draws = np.random.normal(0, sigma, size=1000)
    released = x.mean() + np.mean(draws)  # <-
    return released
""",
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._self_evident: set[int] = set()
        self._noise_off: dict[str, cst.DictElement] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        """``ae_params = {'nonprivate': True, ...}``: a configuration that turns the noise off."""
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name) \
                or not isinstance(node.value, cst.Dict):
            return
        for element in node.value.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) \
                    and isinstance(element.value, cst.Name):
                key = element.key.value.strip("'\"").lower()
                off = key in _NOISE_OFF_KEYS and element.value.value == "True" or \
                    key in _NOISE_ON_KEYS and element.value.value == "False"
                if off:
                    self._noise_off[node.targets[0].target.value] = element

    def visit_Call(self, node: cst.Call) -> None:
        """An ε computed from a configuration whose noise is off: a guarantee claimed for a non-private run."""
        if not self._noise_off or not (ACCOUNTANT_CALL.match(call_name(node)) or call_name(node) in ("epsilon", "eps")):
            return
        for sub in walk(node):
            if isinstance(sub, cst.Subscript) and isinstance(sub.value, cst.Name) and sub.value.value in self._noise_off:
                config = sub.value.value
                fa = self.ctx.analysis
                self.report(node, f"this ε is computed from `{config}`, whose "
                                  f"`{fa.code(self._noise_off[config].key).strip()}` (line "
                                  f"{fa.line_of(self._noise_off[config])}) turns the noise off: the component trained "
                                  "with it is not private, whatever ε this reports")
                return

    def leave_Module(self, original_node: cst.Module) -> None:
        fa = self.ctx.analysis
        self.reports[:] = [r for r in self.reports if id(r.node) in self._self_evident or fa.in_dp_context(r.node)]

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._ignored_budget(node)
        self._discarded_noise(node)
        self._noise_statistic(node)

    def visit_If(self, node: cst.If) -> None:
        """``if i in sample: clipped, noised update; else: raw update`` (DP-SGD where the unsampled examples
        still step the model)."""
        test = node.test
        if not isinstance(test, cst.Comparison) or not any(
                isinstance(c.operator, (cst.In, cst.NotIn)) for c in test.comparisons):
            return
        other = node.orelse
        if not isinstance(other, cst.Else) or not self._loop_index_in_set(test):
            return
        for noisy, raw in ((node.body, other.body), (other.body, node.body)):
            if _draws_noise(noisy) and not _draws_noise(raw) and _updates(noisy) and _clips(noisy):
                update = _updates(raw)
                if update is not None:
                    self._self_evident.add(id(update))
                    self.report(update, f"this branch updates the model with the raw value (no clipping, no noise) "
                                        f"for the records that fail `{self.ctx.analysis.code(test).strip()}`, while "
                                        "the other branch noises its update: those records' contributions are not "
                                        "private, whatever ε the noised branch accounts")
                return

    def _loop_index_in_set(self, test: cst.Comparison) -> bool:
        """``i in rand_sample``: a loop's record index tested against a drawn set (not ``mode in ("dp", …)``)."""
        container = test.comparisons[0].comparator
        if not isinstance(test.left, cst.Name) or not isinstance(container, (cst.Name, cst.Attribute)):
            return False
        fa = self.ctx.analysis
        return any(isinstance(loop, cst.For) and test.left.value in {
            n.value for n in walk(loop.target) if isinstance(n, cst.Name)} for loop in fa.enclosing_loops(test))

    # ---- (3) the statistic of a noise sample in place of the noise -----------------------------
    def _noise_statistic(self, fn: cst.FunctionDef) -> None:
        nodes = list(walk(fn.body, into_scopes=False))
        last: dict[str, cst.Assign] = {}
        for node in nodes:
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                last[node.targets[0].target.value] = node
            if not (isinstance(node, cst.Call) and call_name(node) in _STATISTICS and node.args):
                continue
            arg = node.args[0].value
            source = last.get(arg.value) if isinstance(arg, cst.Name) else None
            if source is None or not _draws_noise(source.value) or _sum(source.value) or not _dp_scaled(source.value):
                continue
            if self._assigned_to(node, arg.value):
                continue  # ``X -= np.mean(X)``: centring the sample itself
            if not self._inside_assignment(node) or self._only_asserted(fn, node):
                continue
            self.report(node, f"`{self.ctx.analysis.code(node).strip()}` is a statistic of the noise sample, not "
                              "noise: over many draws it is almost a constant (a Laplace sample's std is ≈ √2·scale), "
                              "so the value it enters is a deterministic function of the private input; add one noise "
                              "draw to the value instead")

    def _only_asserted(self, fn: cst.FunctionDef, statistic: cst.CSTNode) -> bool:
        """The statistic's name is read only by assertions (a test comparing the sample with its expected law)."""
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(statistic)
        targets = {t.target.value for a in walk(statement) if isinstance(a, cst.Assign)
                   for t in a.targets if isinstance(t.target, cst.Name)}
        if len(targets) != 1:
            return False
        (name,) = targets
        reads = [n for n in walk(fn.body) if isinstance(n, cst.Name) and n.value == name
                 and not fa.inside(n, statement)]
        return bool(reads) and all(any(isinstance(a, cst.Assert) or isinstance(a, cst.Call) and "assert" in
                                       call_name(a).lower() for a in fa.ancestors(n)) for n in reads)

    def _assigned_to(self, node: cst.CSTNode, name: str) -> bool:
        fa = self.ctx.analysis
        current: cst.CSTNode | None = fa.parent(node)
        while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.FunctionDef)):
            if isinstance(current, cst.AugAssign):
                return subscripted_name(current.target) == name
            if isinstance(current, cst.Assign):
                return any(subscripted_name(t.target) == name for t in current.targets)
            current = fa.parent(current)
        return False

    def _inside_assignment(self, node: cst.CSTNode) -> bool:
        fa = self.ctx.analysis
        current: cst.CSTNode | None = fa.parent(node)
        while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.FunctionDef)):
            if isinstance(current, (cst.Assign, cst.AugAssign)):
                return True
            if isinstance(current, cst.Call) and call_name(current) in ("print", "log", "info", "debug"):
                return False
            current = fa.parent(current)
        return False

    # ---- (1) a budget accepted and ignored ---------------------------------------------------
    def _ignored_budget(self, fn: cst.FunctionDef) -> None:
        params = param_names(fn)
        budget = [p for p in params if p in _BUDGET_PARAMS]
        if not budget or fn.params.star_kwarg is not None or fn.decorators:
            return
        if words(fn.name.value) & _NON_PRIVATE or self._interface_method(fn):
            return
        body = list(walk(fn.body))
        read = {n.value for n in body if isinstance(n, cst.Name)}
        if read & set(params) & _PRIVACY_PARAMS:
            return
        if not any(isinstance(n, cst.Call) and call_name(n) in _TRAIN_STEPS and isinstance(n.func, cst.Attribute)
                   for n in body):
            return
        if not self._called_with_budget(fn, budget[0]):
            return
        self.report(
            fn.name,
            f"`{fn.name.value}` takes {', '.join(f'`{p}`' for p in params if p in _PRIVACY_PARAMS)} and its "
            "caller passes a budget, but the body reads none of them: plain training steps, no clipping, no noise. "
            "Whatever is reported for that ε is not differentially private; spend the budget here (clip and noise) "
            "or stop labelling the results private",
        )

    def _interface_method(self, fn: cst.FunctionDef) -> bool:
        """A method of a class with a base (an override or interface), or of a class named non-private."""
        cls = self.ctx.analysis.parent(self.ctx.analysis.parent(fn))
        if not isinstance(cls, cst.ClassDef):
            return False
        named = words(cls.name.value) & _NON_PRIVATE
        bases = [b for b in cls.bases if not (isinstance(b.value, cst.Name) and b.value.value == "object")]
        return bool(named or bases)

    def _called_with_budget(self, fn: cst.FunctionDef, param: str) -> bool:
        """Does a call of ``fn`` in this module pass ``param`` (by keyword or position)?"""
        params = param_names(fn)
        index = params.index(param)
        if params and params[0] in ("self", "cls"):
            index -= 1
        for call in walk(self.ctx.module):
            if not isinstance(call, cst.Call) or call_name(call) != fn.name.value:
                continue
            if any(a.keyword is not None and a.keyword.value == param for a in call.args):
                return True
            positional = [a for a in call.args if a.keyword is None and not a.star]
            if len(positional) > index >= 0:
                return True
        return False

    # ---- (2) a noised copy computed and discarded --------------------------------------------
    def _discarded_noise(self, fn: cst.FunctionDef) -> None:
        nodes = list(walk(fn.body, into_scopes=False))
        assigns = [n for n in nodes if isinstance(n, cst.Assign) and len(n.targets) == 1]
        noise = {t for a in assigns if _draws_noise(a.value) and not _sum(a.value) and _dp_scaled(a.value)
                 and (t := subscripted_name(a.targets[0].target)) is not None and isinstance(a.targets[0].target, cst.Name)}
        noised: dict[str, cst.Assign] = {}
        for a in assigns:
            name = subscripted_name(a.targets[0].target)
            if name is None or name in noise or name in noised:
                continue
            if any(isinstance(b, cst.BinaryOperation) and isinstance(b.operator, cst.Add) and any(
                    _draws_noise(side) and _dp_scaled(side) or isinstance(side, cst.Name) and side.value in noise
                    for side in (b.left, b.right)) for b in walk(a.value)):
                noised[name] = a
        self._dropped_draw(fn, assigns, noise)
        for name, first in noised.items():
            if not self._used(fn, name, list(walk(fn.body))):  # a closure's read counts
                self.report(
                    first,
                    f"`{name}` gets the noise here but is never used afterwards (only measured or updated in place; "
                    "not returned, loaded or stepped): the computation goes on with the un-noised values, so the "
                    "noise protects nothing; use the noised copy instead of the original",
                )

    def _dropped_draw(self, fn: cst.FunctionDef, assigns: list[cst.Assign], noise: set[str]) -> None:
        """``noise = normal(…, stddev=C·σ)`` never read, beside ``noised = grads`` (the ``+ noise`` left out or
        commented away): the value named as noised is the raw one."""
        noised = [a for a in assigns if isinstance(a.targets[0].target, cst.Name)
                  and words(a.targets[0].target.value) & _NOISED_WORDS and not _draws_noise(a.value)]
        if not noised:
            return
        loads = {n.value for n in walk(fn.body) if isinstance(n, cst.Name)
                 and not isinstance(self.ctx.analysis.parent(n), cst.AssignTarget)}
        for a in assigns:
            target = a.targets[0].target
            if isinstance(target, cst.Name) and target.value in noise and target.value not in loads:
                release = noised[0].targets[0].target.value  # type: ignore[attr-defined]
                self.report(a, f"the noise `{target.value}` is drawn here and never used, while `{release}` (line "
                               f"{self.ctx.analysis.line_of(noised[0])}) is assigned without it: the value named as "
                               "noised is the raw one and the noise protects nothing; add the noise to it")
                return

    def _used(self, fn: cst.FunctionDef, name: str, nodes: list[cst.CSTNode]) -> bool:
        """Is ``name`` read anywhere other than in its own (subscript) assignments or a measurement?"""
        fa = self.ctx.analysis
        for node in nodes:
            if not (isinstance(node, cst.Name) and node.value == name):
                continue
            parent = fa.parent(node)
            if isinstance(parent, cst.Subscript) and parent.value is node:
                holder = fa.parent(parent)
                if isinstance(holder, cst.AssignTarget):
                    continue  # ``name[k] = …``
            if isinstance(parent, cst.AssignTarget):
                continue
            if self._inside_own_assignment_or_measure(node, name):
                continue
            return True
        return False

    def _inside_own_assignment_or_measure(self, node: cst.CSTNode, name: str) -> bool:
        fa = self.ctx.analysis
        current: cst.CSTNode | None = fa.parent(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.SimpleStatementLine)):
            if isinstance(current, cst.Call) and call_name(current) in _MEASURES and call_name(current) != "append":
                return True
            if isinstance(current, cst.Assign):
                return len(current.targets) == 1 and subscripted_name(current.targets[0].target) == name
            current = fa.parent(current)
        return False

