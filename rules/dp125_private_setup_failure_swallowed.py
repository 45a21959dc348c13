"""DP125: a failure of the private setup or training is caught and the run goes on without privacy."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts

from dpcheck.analysis.syntax import call_name, dotted, last_name, walk, words
from dpcheck.rule import Rule

#: keyword arguments that carry the privacy mechanism's parameters
_DP_KEYWORDS = frozenset({"sigma", "noise_multiplier", "noise_scale", "noise_std", "epsilon", "target_epsilon",
                          "target_eps", "eps", "max_grad_norm", "l2_norm_clip", "clip_norm", "clipping_norm",
                          "target_delta", "dp_epsilon", "privacy_budget", "noise"})
#: words of calls (or of the objects they build) that set privacy up
_DP_CALL_WORDS = frozenset({"private", "privacy", "dp", "privatize", "privatise", "accountant"})
#: words of a target that, set to None / False, turn privacy off
_DP_TARGET_WORDS = frozenset({"privacy", "private", "dp", "engine", "accountant", "noise"})
_EXITS = frozenset({"exit", "quit", "abort", "_exit"})


#: calls that privatise a value, and names of a value that has been privatised
_PERTURB_WORDS = frozenset({"perturb", "privatize", "privatise", "sanitize", "sanitise", "anonymize", "anonymise",
                            "obfuscate", "randomize", "randomise", "noise", "noisy"})
_PERTURBED_WORDS = frozenset({"perturbed", "privatized", "privatised", "sanitized", "sanitised", "anonymized",
                              "anonymised", "noisy", "noised", "obfuscated", "randomized", "randomised"})


def _tiny(expr: cst.BaseExpression) -> bool:
    """A literal noise scale of (almost) zero: ``0``, ``0.0``, ``1e-6``."""
    from dpcheck.analysis.syntax import number

    value = number(expr)
    return value is not None and 0 <= value <= 1e-3


def _off(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value in ("None", "False")


def _dp_call(call: cst.Call) -> bool:
    """A call given a privacy parameter (not None), or one whose name says it sets privacy up."""
    if any(a.keyword is not None and a.keyword.value in _DP_KEYWORDS and not _off(a.value) for a in call.args):
        return True
    return bool(words(call_name(call).split(".")[-1]) & _DP_CALL_WORDS)


def _plain_twin(call: cst.Call, dp: cst.Call) -> bool:
    """``call`` is the same callee as ``dp`` without its privacy keywords (missing, None or False)."""
    if call_name(call) != call_name(dp) or dotted(call.func) != dotted(dp.func):
        return False  # another object's ``fit`` (a model trained inside a private context) is not a retry
    keys = {a.keyword.value for a in dp.args if a.keyword is not None and a.keyword.value in _DP_KEYWORDS
            and not _off(a.value)}
    if not keys:
        return False
    given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    values = {dotted(a.value) for a in dp.args if a.keyword is not None and a.keyword.value in keys} - {None}
    passed = {dotted(n) for a in call.args for n in walk(a.value) if isinstance(n, (cst.Name, cst.Attribute))}
    if values & passed:
        return False  # the same noise parameters passed positionally (another signature), not dropped
    return all(k not in given or _off(given[k]) for k in keys)


class PrivateSetupFailureSwallowed(Rule):
    id = "DP125"
    name = "private-setup-failure-swallowed"
    category = "general"
    severity = "error"
    summary = ("an exception from the private setup or training is caught and the run continues without privacy "
               "(the engine set to None, or the same call retried without its noise parameters)")
    rationale = (
        "When attaching the privacy engine, or calling the trainer with its noise parameters, fails and the "
        "handler turns privacy off (`self.privacy_engine = None`, `use_dp = False`) or retries the call without "
        "`sigma` / `noise_multiplier` / `epsilon`, the run completes non-privately, yet its outputs, metrics and "
        "reports keep the ε they were configured with (or print ε = 0). Nothing tells the reader that the "
        "guarantee silently vanished. Reported: a `try` whose body makes such a call, and a handler that does not "
        "re-raise or exit and either sets a privacy object or flag to None / False or makes the same call without "
        "the privacy keywords (in the handler or after the `try`). Also reported: a handler that releases what the "
        "`try` was privatising: it returns the value the body adds noise to (`except Exception: return grads, "
        "0.0`), returns a noise scale of (almost) zero in place of the σ the body computes (`return 1e-6`), or sets "
        "a field the body fills from a perturbing call to that call's raw input (`new['text'] = row['text']`). "
        "Not reported: optional imports, handlers that raise, exit or drop the record. Fix: let the failure propagate (or stop the run) instead of continuing without noise."
    )
    TRIGGERS = ("except",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``try`` and a call given a privacy keyword or named for privacy."""
        if not any(isinstance(n, ast.Try) for n in ast.walk(facts.tree)):
            return False
        return bool(facts.identifiers & _DP_KEYWORDS) or any(words(n) & _DP_CALL_WORDS for n in facts.called) \
            or any(words(n) & (_PERTURB_WORDS | _PERTURBED_WORDS | {"sigma", "multiplier"}) for n in facts.identifiers)

    VALID = (
        # twin of the logged setup failure: the handler stops the round instead of training without the engine
        """
from opacus import PrivacyEngine
def fit(model, optimizer, loader, target_epsilon, epochs):
    engine = PrivacyEngine()
    try:
        model, optimizer, loader = engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader, epochs=epochs,
            target_epsilon=target_epsilon, target_delta=1e-5, max_grad_norm=1.0)
    except Exception as err:
        print("privacy setup failed:", err)
        return None
    for x, y in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
    return model
""",
        # twins of the un-noised fallbacks: the handler re-raises, drops the record, or stops the step
        """
import math
import torch
def add_dp_noise(grads, clip, sigma):
    try:
        std = clip * sigma
        noisy = []
        for g in grads:
            noise = torch.normal(0.0, std, size=g.shape)
            noisy.append(g + noise)
        return noisy
    except Exception as exc:
        raise RuntimeError("noise failed") from exc
def noise_multiplier(steps, delta, epsilon):
    try:
        sigma = math.sqrt(2 * steps * math.log(1.25 / delta)) / epsilon
        return sigma
    except (ValueError, ZeroDivisionError):
        raise
def release(rows, perturber):
    out = []
    for row in rows:
        new = dict(row)
        try:
            perturbed_name = perturber.perturb(row["name"])
            new["text"] = row["text"].replace(row["name"], perturbed_name)
        except Exception:
            continue
        out.append(new)
    return out
""",
        # a data column's spread with a fallback is no noise scale
        """
import numpy as np
def column_scale(values):
    try:
        std = float(np.std(values))
        return std
    except TypeError:
        return 0.0
def release(x, epsilon):
    return x + np.random.laplace(0, 1 / epsilon)
""",
        # a diffusion sampler's fallback is no release
        """
import torch
def q_sample(x0, t, alphas):
    try:
        eps = torch.randn_like(x0)
        return alphas[t].sqrt() * x0 + (1 - alphas[t]).sqrt() * eps
    except IndexError:
        return x0
""",
        # the failure propagates
        """
import logging
def setup(engine_cls, model, optimizer, loader, target_epsilon):
    try:
        return engine_cls().make_private_with_epsilon(module=model, optimizer=optimizer, data_loader=loader,
                                                      target_epsilon=target_epsilon, target_delta=1e-5, epochs=1)
    except Exception as exc:
        logging.error("privacy setup failed: %s", exc)
        raise
""",
        # an optional import
        """
try:
    from opacus import PrivacyEngine
except ImportError:
    PrivacyEngine = None
""",
        # the retry keeps the noise parameters (an older signature)
        """
def run(trainer, data, sigma):
    try:
        return trainer.train(data=data, sigma=sigma, sample_rate=0.01)
    except TypeError:
        pass
    return trainer.train(data=data, sigma=sigma)
""",
        # a tutorial: the failing call is shown, then another model is fitted inside the private optimizer's context
        """
def demo(bolt, model, optimizer, x, y, epsilon):
    try:
        bolt.fit(x, y, epsilon=epsilon, n_samples=None)
    except ValueError as err:
        print(err)
    with optimizer(epsilon=epsilon) as _:
        model.fit(x, y, epochs=2)
""",
        # a signature fallback that passes the same noise parameters positionally
        """
def statement(compute, n, batch, epochs, noise_multiplier, delta):
    try:
        return compute(number_of_examples=n, batch_size=batch, num_epochs=epochs,
                       noise_multiplier=noise_multiplier, delta=delta)
    except TypeError:
        return compute(n, batch, epochs, noise_multiplier, delta)
""",
        # the handler stops the run
        """
import sys
def start(model, noise_multiplier, make_private):
    try:
        model = make_private(model, noise_multiplier=noise_multiplier)
    except RuntimeError:
        sys.exit("DP setup failed")
    return model
""",
    )
    INVALID = (
        # the setup failure is only printed and the plain optimizer trains on the private loader
        """
from opacus import PrivacyEngine
def fit(model, optimizer, loader, target_epsilon, epochs):
    engine = PrivacyEngine()
    try:
        model, optimizer, loader = engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader, epochs=epochs,
            target_epsilon=target_epsilon, target_delta=1e-5, max_grad_norm=1.0)
    except Exception as err:  # <-
        print("privacy setup failed:", err)
    for x, y in loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()
    return model
""",
        # scalable-private-llm *_DPSGD_lora*.py: on any error the summed clipped gradient is returned without noise,
        # and a failed σ computation falls back to 1e-6; dp_author_name_perturbation.py: a failed replacement
        # keeps the original text with the real name
        """
import math
import torch
def add_dp_noise(grads, clip, sigma):
    try:
        std = clip * sigma
        noisy = []
        for g in grads:
            noise = torch.normal(0.0, std, size=g.shape)
            noisy.append(g + noise)
        return noisy, std
    except Exception as exc:
        print("noise failed", exc)
        return grads, 0.0  # <-
def noise_multiplier(steps, delta, epsilon):
    try:
        sigma = math.sqrt(2 * steps * math.log(1.25 / delta)) / epsilon
        return sigma
    except (ValueError, ZeroDivisionError):
        return 1e-6  # <-
def release(rows, perturber, replace):
    out = []
    for row in rows:
        new = dict(row)
        perturbed_name = perturber.perturb(row["name"])
        try:
            new["text"] = replace(row.get("text", ""), row["name"], perturbed_name)
        except Exception:
            new["text"] = row.get("text", "")  # <-
        out.append(new)
    return out
""",
        # the engine dropped on failure
        """
class Client:
    def __init__(self, engine_cls, model, loader, target_epsilon):
        try:
            self.dp_engine = engine_cls(model, loader, target_epsilon=target_epsilon, max_grad_norm=1.0)
        except Exception:
            print("continuing without DP")
            self.dp_engine = None  # <-
""",
        # the trainer retried with the noise switched off
        """
def fit(trainer, table, noise_multiplier):
    try:
        return trainer.train(table, noise_multiplier=noise_multiplier)
    except TypeError:
        pass
    return trainer.train(table, noise_multiplier=None)  # <-
""",
        # retried without the privacy keywords inside the handler
        """
def train_synth(model, data, eps):
    try:
        model.fit(data, epsilon=eps)
    except ValueError:
        model.fit(data)  # <-
    return model
""",
        # a flag turned off
        """
def prepare(model, optimizer, engine, clip):
    use_dp = True
    try:
        model, optimizer = engine.make_private(model, optimizer, max_grad_norm=clip)
    except AttributeError:
        use_dp = False  # <-
    return model, optimizer, use_dp
""",
    )

    def visit_Try(self, node: cst.Try) -> None:
        if self._unnoised_fallback(node):
            return
        dps = [c for c in walk(node.body) if isinstance(c, cst.Call) and _dp_call(c)]
        if not dps:
            return
        for handler in node.handlers:
            if any(isinstance(n, cst.Raise) for n in walk(handler.body)) or any(
                    isinstance(n, cst.Call) and call_name(n).split(".")[-1] in _EXITS for n in walk(handler.body)):
                continue
            site = self._off_in_handler(handler) or self._plain_retry(handler.body, dps)
            if site is None and self._passes(handler):
                site = self._retry_after(node, dps) or self._plain_objects_used(node, handler)
            if site is not None:
                self.report(
                    site,
                    "a failure of the private setup / training is caught and the run continues without privacy "
                    "(no noise), while its results keep the configured ε; let the error propagate or stop the run",
                )
                return

    def _unnoised_fallback(self, node: cst.Try) -> bool:
        """A handler that releases what the ``try`` was privatising: it returns the value the body adds noise to
        (``except Exception: return aggregated_gradient, 0.0``), returns a noise scale of (almost) zero in place of
        the σ the body computes (``except ValueError: return 1e-6``), or assigns to a field the body fills from a
        perturbing call that very call's raw input (``new['question'] = qa['question']``)."""
        noised = self._noised_names(node.body)
        scale = self._scale_returned(node.body)
        filled = self._perturbed_fields(node.body)
        if not (noised or scale or filled):
            return False
        fa = self.ctx.analysis
        for handler in node.handlers:
            if any(isinstance(n, cst.Raise) for n in walk(handler.body)):
                continue
            for n in walk(handler.body):
                if isinstance(n, cst.Return) and n.value is not None:
                    values = [e.value for e in n.value.elements] if isinstance(n.value, cst.Tuple) else [n.value]
                    raw = next((v for v in values if isinstance(v, cst.Name) and v.value in noised), None)
                    if raw is not None:
                        self.report(n, f"when adding the noise fails, the handler returns `{raw.value}` without it: "
                                       f"the un-noised value is released (or applied) as if it were private; let the "
                                       f"error propagate")
                        return True
                    tiny = next((v for v in values if _tiny(v)), None)
                    if scale and tiny is not None and len(values) == 1:
                        self.report(n, f"when computing the noise scale fails, the handler returns "
                                       f"`{fa.code(tiny)}` as σ: the run goes on with (almost) no noise while it "
                                       f"still claims its ε; let the error propagate")
                        return True
                if isinstance(n, cst.Assign) and filled and len(n.targets) == 1:
                    key = fa.code(n.targets[0].target).strip()
                    if key in filled and fa.code(n.value).strip() in filled[key]:
                        self.report(n, f"when the perturbation fails, the handler sets `{key}` to the raw input "
                                       f"`{fa.code(n.value).strip()[:60]}`: the original private value is released "
                                       f"in place of the perturbed one; drop the record or let the error propagate")
                        return True
        return False

    @staticmethod
    def _noised_names(body: cst.CSTNode) -> set[str]:
        """Names the body adds a zero-centred noise draw to: ``x + noise`` with ``noise = torch.normal(0, s, …)``,
        or the collection ``xs`` of ``for g in xs: … g + noise``."""
        from dpcheck.analysis.noisedraws import is_draw, zero_centred

        draws = {t.target.value for n in walk(body) if isinstance(n, cst.Assign) and is_draw(n.value)
                 and all(zero_centred(c) for c in walk(n.value) if isinstance(c, cst.Call))
                 for t in n.targets if isinstance(t.target, cst.Name)}
        added: set[str] = set()
        for n in walk(body):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Add):
                for side, other in ((n.left, n.right), (n.right, n.left)):
                    if isinstance(side, cst.Name) and (isinstance(other, cst.Name) and other.value in draws
                                                       or is_draw(other)):
                        added.add(side.value)
        out = set(added)
        for n in walk(body):
            if isinstance(n, cst.For) and isinstance(n.target, cst.Name) and n.target.value in added \
                    and isinstance(n.iter, cst.Name):
                out.add(n.iter.value)
        return out

    @staticmethod
    def _scale_returned(body: cst.CSTNode) -> bool:
        """The body returns a noise scale it computes from the privacy budget (a name or expression of σ / noise
        multiplier / std, in a body that reads ε or δ); a data column's std is no noise scale."""
        if not any(isinstance(x, (cst.Name, cst.Attribute)) and words(last_name(x) or "") & {
                "epsilon", "eps", "delta", "budget", "privacy"} for x in walk(body)):
            return False
        for n in walk(body):
            if isinstance(n, cst.Return) and n.value is not None and not isinstance(n.value, cst.Tuple):
                refs = {x.value for x in walk(n.value) if isinstance(x, cst.Name)}
                if any(words(r) & {"sigma", "multiplier", "std", "stddev"} for r in refs):
                    return True
        return False

    @staticmethod
    def _perturbed_fields(body: cst.CSTNode) -> dict[str, set[str]]:
        """``target -> raw inputs``: fields the body sets from a call that is handed a perturbed value
        (``replace(text, original, perturbed_author)``, ``perturb(x)``), with that call's other arguments."""
        module = cst.Module(body=[])
        out: dict[str, set[str]] = {}
        for n in walk(body):
            if not (isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.value, cst.Call)):
                continue
            call = n.value
            named = words(call_name(call).split(".")[-1]) & _PERTURB_WORDS
            handed = any(isinstance(a.value, cst.Name) and words(a.value.value) & _PERTURBED_WORDS for a in call.args)
            if not (named or handed):
                continue
            key = module.code_for_node(n.targets[0].target).strip()
            out.setdefault(key, set()).update(
                module.code_for_node(a.value).strip() for a in call.args
                if not (isinstance(a.value, cst.Name) and words(a.value.value) & _PERTURBED_WORDS))
        return out

    @staticmethod
    def _off_in_handler(handler: cst.ExceptHandler) -> cst.CSTNode | None:
        for n in walk(handler.body):
            if isinstance(n, cst.Assign) and _off(n.value) and any(
                    words((dotted(t.target) or "").split(".")[-1]) & _DP_TARGET_WORDS for t in n.targets):
                return n
        return None

    @staticmethod
    def _plain_retry(body: cst.CSTNode, dps: list[cst.Call]) -> cst.CSTNode | None:
        for n in walk(body):
            if isinstance(n, cst.Call) and any(_plain_twin(n, dp) for dp in dps):
                return n
        return None

    @staticmethod
    def _passes(handler: cst.ExceptHandler) -> bool:
        """The handler only passes, continues or logs."""
        for stmt in walk(handler.body):
            if isinstance(stmt, (cst.Return, cst.Assign, cst.AugAssign, cst.Break)):
                return False
        return True

    def _plain_objects_used(self, node: cst.Try, handler: cst.ExceptHandler) -> cst.CSTNode | None:
        """``model, optimizer, loader = engine.make_private(...)`` fails, the handler only logs, and the code after
        the ``try`` trains with the objects it was to replace: the plain optimizer steps without clipping or noise."""
        if not isinstance(node.body, cst.IndentedBlock) or len(node.body.body) != 1:
            return None
        stmt = node.body.body[0]
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign) and isinstance(stmt.body[0].value, cst.Call)):
            return None
        assign = stmt.body[0]
        if not words(call_name(assign.value).split(".")[-1]) & {"private", "privatize", "privatise"}:
            return None
        rebound: set[str] = set()
        for t in assign.targets:
            leaves = [e.value for e in t.target.elements] if isinstance(t.target, (cst.Tuple, cst.List)) else [t.target]
            rebound |= {d for d in (dotted(leaf) for leaf in leaves) if d is not None}
        parent = self.ctx.analysis.parent(node)
        body = getattr(parent, "body", None)
        if not isinstance(body, (list, tuple)) or not rebound:
            return None
        after = False
        for later in body:
            if later is node:
                after = True
                continue
            if after and any(isinstance(n, cst.Call) and call_name(n).split(".")[-1] in ("step", "backward", "fit")
                             for n in walk(later)) and any(
                    isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) in rebound for n in walk(later)):
                return handler
        return None

    def _retry_after(self, node: cst.Try, dps: list[cst.Call]) -> cst.CSTNode | None:
        parent = self.ctx.analysis.parent(node)
        body = getattr(parent, "body", None)
        if not isinstance(body, (list, tuple)):
            return None
        after = False
        for stmt in body:
            if stmt is node:
                after = True
                continue
            if after:
                site = self._plain_retry(stmt, dps)
                if site is not None:
                    return site
        return None
