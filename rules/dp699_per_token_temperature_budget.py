"""DP699: a sampling temperature calibrated from ε (`2 * sensitivity / eps`) is used for a multi-token
`generate` call: every sampled token spends ε, so the text spends up to max_new_tokens·ε."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.resolver import product_factors
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"epsilon", "eps", "budget"})
_NUMERIC = frozenset({"norm", "adam", "optimizer", "optim", "tol", "tolerance", "machine", "numerical", "stability",
                      "small", "float", "finfo"})
_LENGTH_KW = frozenset({"max_new_tokens", "max_length", "max_tokens", "min_new_tokens"})
_PER_TOKEN = frozenset({"token", "tokens", "length", "len", "steps", "step", "new"})


def _budget(expr: cst.CSTNode) -> bool:
    name = dotted(expr)
    if name is None:
        return False
    pieces = words(name.rsplit(".", 1)[-1])
    return bool(pieces & _BUDGET) and not pieces & _NUMERIC


class PerTokenTemperatureBudget(Rule):
    id = "DP699"
    name = "per-token-temperature-budget"
    category = "general"
    severity = "error"
    summary = ("a sampling temperature calibrated from ε (`temperature = 2 * sensitivity / eps`) drives a "
               "multi-token `generate(...)`: each sampled token spends ε, the text spends up to "
               "max_new_tokens·ε")
    rationale = (
        "Sampling one token from softmax(logits / T) with logits clipped to a range of width Δ and "
        "T = 2Δ/ε is the exponential mechanism at ε (DP-Prompt). `model.generate(..., do_sample=True, "
        "temperature=T, max_new_tokens=k)` samples k tokens this way from the same private prompt, and by "
        "sequential composition the paraphrase spends up to k·ε; labelling the output with ε (or saying the "
        "total ε is spread over the decoding steps) overstates its privacy k-fold. Reported: an assignment to a "
        "temperature-named value with a budget name in a denominator, passed as `temperature=` to a call that "
        "also sets `max_new_tokens`/`max_length`/`max_tokens` to something other than the literal 1, when the "
        "budget was not first divided by a token count. Fix: T = 2Δ/(ε/k) for a total ε over k tokens, or "
        "report k·ε."
    )
    TRIGGERS = ("temperature",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a call with a ``temperature=`` keyword and a length keyword."""
        for call in facts.calls:
            kws = {k.arg for k in call.keywords}
            if "temperature" in kws and kws & _LENGTH_KW:
                return True
        return False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        temps: dict[str, cst.Assign] = {}
        split: set[str] = set()
        for stmt in walk(node.body, into_scopes=False):
            if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
                continue
            target = dotted(stmt.targets[0].target)
            if target is None:
                continue
            factors = product_factors(stmt.value)
            if words(target.rsplit(".", 1)[-1]) & {"temperature", "temp"} and any(
                    sign < 0 and _budget(f) for f, sign in factors):
                temps[target] = stmt
            # ``eps_tok = eps / max_new_tokens``: the budget is split over the tokens
            if _budget(stmt.targets[0].target) and any(
                    sign < 0 and any(words(dotted(n) or "") & _PER_TOKEN for n in walk(f)
                                     if isinstance(n, (cst.Name, cst.Attribute)))
                    for f, sign in factors):
                split.add(target)
        if not temps:
            return
        for call in walk(node.body, into_scopes=False):
            if not isinstance(call, cst.Call):
                continue
            kws = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            temp = dotted(kws.get("temperature"))
            if temp not in temps:
                continue
            lengths = [v for k, v in kws.items() if k in _LENGTH_KW and k != "min_new_tokens"]
            if not lengths or all(isinstance(v, cst.Integer) and v.value == "1" for v in lengths):
                continue
            stmt = temps[temp]
            used = {dotted(f) for f, sign in product_factors(stmt.value) if sign < 0}
            if used & split:
                continue
            self.report(stmt, f"`{fa.code(stmt).strip()[:70]}` calibrates one sampled token to ε, and "
                              f"`{call_name(call)}` samples up to `{fa.code(lengths[0]).strip()}` tokens with it: "
                              "the text spends that many times ε by composition; divide ε by the token count "
                              "or report the total")
            temps.pop(temp)

    VALID = (
        # twin: the budget is split over the tokens first
        """
def paraphrase(model, inputs, epsilon, sensitivity, max_new_tokens):
    eps_token = epsilon / max_new_tokens
    temperature = 2 * sensitivity / eps_token
    return model.generate(**inputs, do_sample=True, temperature=temperature, max_new_tokens=max_new_tokens)
""",
        # twin: one token per call
        """
def next_token(model, inputs, epsilon, sensitivity):
    temperature = 2 * sensitivity / epsilon
    return model.generate(**inputs, do_sample=True, temperature=temperature, max_new_tokens=1)
""",
        # ordinary ML: a fixed temperature for creative sampling
        """
def sample(model, inputs, temp=0.7):
    temperature = temp / 1.0
    return model.generate(**inputs, do_sample=True, temperature=temperature, max_new_tokens=256)
""",
        # a temperature from ε used to score, not to generate text
        """
import torch
def private_pick(logits, epsilon, sensitivity):
    temperature = 2 * sensitivity / epsilon
    return torch.multinomial(torch.softmax(logits / temperature, -1), 1)
""",
    )

    INVALID = (
        """
def paraphrase(model, inputs, epsilon, sensitivity, max_new_tokens):
    temperature = 2 * sensitivity / epsilon  # <-
    return model.generate(**inputs, do_sample=True, temperature=temperature, max_new_tokens=max_new_tokens)
""",
        """
class DPPrompt:
    def rewrite(self, enc, eps):
        self.temp = 2 * (self.clip_max - self.clip_min) / eps  # <-
        out = self.lm.generate(enc, do_sample=True, temperature=self.temp, max_length=enc.shape[1] + 64)
        return out
""",
        """
def privatize_all(model, batch, epsilons, delta_u):
    outs = []
    for eps in epsilons:
        temperature = 2.0 * delta_u / eps  # <-
        outs.append(model.generate(**batch, temperature=temperature, do_sample=True, max_new_tokens=128))
    return outs
""",
        """
def dp_rewrite(client, prompt, epsilon, sens, length=200):
    sampling_temperature = (2 * sens) / epsilon  # <-
    return client.complete(prompt, temperature=sampling_temperature, max_tokens=length)
""",
    )
