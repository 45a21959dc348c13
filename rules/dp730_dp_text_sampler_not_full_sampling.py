"""DP730: a DP-Prompt / DP-Paraphrase sampler whose temperature is calibrated to ε, decoded greedily or from
a truncated (top-k / top-p) vocabulary."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, name_words, number, walk
from dpcheck.rule import Rule

_EPS_WORDS = frozenset({"eps", "epsilon", "epsilons", "epsi"})
#: calls that decode text from a language model (a ``pipeline`` object is usually kept as ``pipe``/``generator``)
_GENERATORS = frozenset({"generate", "pipe", "pipeline", "generator", "text_generator", "textgen", "llm",
                         "model_generate", "sample_sequence"})
_TEMPERATURE = frozenset({"temperature", "temp"})


def _key(element: cst.BaseDictElement) -> str | None:
    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
        value = element.key.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _truthy(expr: cst.BaseExpression) -> bool | None:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


class DPTextSamplerNotFullSampling(Rule):
    id = "DP730"
    name = "dp-text-sampler-not-full-sampling"
    category = "general"
    severity = "error"
    summary = ("a language model decodes at a temperature calibrated to ε (DP-Prompt, DP-Paraphrase) but the "
               "call is greedy (no `do_sample=True`) or truncated (`top_k` > 0, default top-50, `top_p` < 1)")
    rationale = (
        "DP-Prompt and DP-Paraphrase are the exponential mechanism over the whole vocabulary: with logits clipped "
        "to a range Δ, sampling each token from softmax(logits / T) at T = 2Δ/ε is ε-DP per token. The guarantee "
        "needs plain sampling from the full distribution. A Hugging Face `generate` / text-generation pipeline "
        "call without `do_sample=True` decodes greedily (the arg-max token of the private prompt, a deterministic "
        "function of it, no randomness at all); with `do_sample=True` it still keeps only the `top_k` most likely "
        "tokens (50 by default) or the `top_p` nucleus, a set chosen from the private prompt: every token outside "
        "it gets probability 0 and the ratio of output probabilities between neighbouring prompts is unbounded. "
        "Reported: a generation call whose `temperature=` is computed from ε and that lacks `do_sample=True`, "
        "keeps the default `top_k`, or passes `top_k` > 0 / `top_p` < 1; and a `top_k` > 0 / `top_p` < 1 in a "
        "generation config of a module that sets the temperature from ε. Fix: `do_sample=True, top_k=0, "
        "top_p=1.0` (and the logit clipping)."
    )
    TRIGGERS = ("temperature",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a keyword or dict key named ``temperature`` and an ε identifier in the file."""
        ids = facts.identifiers
        if not any(w in ids for w in ("eps", "epsilon", "epsilons", "epsi")) and not any(
                "eps" in i.lower() for i in ids):
            return False
        for call in facts.calls:
            if any(k.arg in _TEMPERATURE for k in call.keywords):
                return True
        for node in facts.nodes(ast.Dict):
            if any(isinstance(k, ast.Constant) and k.value in _TEMPERATURE for k in node.keys):  # type: ignore[attr-defined]
                return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        assigned: dict[str, list[cst.BaseExpression]] = {}
        for sub in walk(node):
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    name = last_name(t.target)
                    if name:
                        assigned.setdefault(name, []).append(sub.value)

        def from_eps(expr: cst.BaseExpression, depth: int = 0) -> bool:
            if name_words(expr) & _EPS_WORDS:
                return True
            if depth >= 2:
                return False
            for n in walk(expr):
                name = last_name(n) if isinstance(n, (cst.Name, cst.Attribute)) else None
                if name and any(from_eps(v, depth + 1) for v in assigned.get(name, ())):
                    return True
            return False

        eps_temperature = False
        generates = False
        calls: list[tuple[cst.Call, dict[str, cst.BaseExpression]]] = []
        for sub in walk(node):
            if isinstance(sub, cst.Call):
                kw = {a.keyword.value: a.value for a in sub.args if a.keyword is not None}
                if call_name(sub) in _GENERATORS:
                    generates = True
                temp = next((kw[k] for k in _TEMPERATURE if k in kw), None)
                if temp is not None and number(temp) is None and from_eps(temp):
                    eps_temperature = True
                    calls.append((sub, kw))
            elif isinstance(sub, cst.Dict):
                for e in sub.elements:
                    if _key(e) in _TEMPERATURE and number(e.value) is None and from_eps(e.value):  # type: ignore[union-attr]
                        eps_temperature = True
            elif isinstance(sub, cst.Assign) and any(last_name(t.target) in _TEMPERATURE for t in sub.targets) \
                    and from_eps(sub.value):
                eps_temperature = True
        if not eps_temperature or not generates:
            return
        for call, kw in calls:
            if call_name(call) not in _GENERATORS:
                continue
            if any(a.star == "**" for a in call.args) or "generation_config" in kw:
                continue  # the sampling settings come from elsewhere
            sample = kw.get("do_sample")
            if sample is None or _truthy(sample) is False:
                self.report(call, "the temperature is calibrated to ε but the call does not sample "
                                  "(no `do_sample=True`): decoding is greedy, a deterministic function of the "
                                  "private text; pass `do_sample=True, top_k=0`")
            elif "top_k" not in kw:
                self.report(call, "the temperature is calibrated to ε but `top_k` is left at its default (50): "
                                  "only the 50 most likely tokens of the private context can be drawn; pass "
                                  "`top_k=0`")
        seen: set[int] = set()
        for sub in walk(node):
            items: list[tuple[str, cst.BaseExpression, cst.CSTNode]] = []
            if isinstance(sub, cst.Dict):
                items = [(_key(e), e.value, e) for e in sub.elements if _key(e)]  # type: ignore[misc,union-attr]
            elif isinstance(sub, cst.Call):
                items = [(a.keyword.value, a.value, a) for a in sub.args if a.keyword is not None]
            for key, value, where in items:
                v = number(value)
                if v is None or id(where) in seen:
                    continue
                if (key == "top_k" and v >= 1) or (key == "top_p" and 0 < v < 1):
                    seen.add(id(where))
                    self.report(where, f"`{key}={value.value if hasattr(value, 'value') else v}` truncates the "
                                       "vocabulary of a sampler whose temperature is calibrated to ε: tokens "
                                       "outside the set chosen from the private context get probability 0 and ε "
                                       "does not hold; sample the full vocabulary (`top_k=0, top_p=1.0`)")

    VALID = (
        # twin: DP-Paraphrase sampling the full vocabulary
        """
from transformers import pipeline
class Paraphraser:
    def __init__(self, model, tok, clip_range):
        self.sensitivity = clip_range
        self.pipe = pipeline("text-generation", model=model, tokenizer=tok)
    def privatize(self, text, epsilon):
        temperature = 2 * self.sensitivity / epsilon
        return self.pipe(text + " >>> ", max_new_tokens=64, temperature=temperature,
                         do_sample=True, top_k=0)[0]["generated_text"]
""",
        # twin: a DP-Prompt generation config without truncation
        """
def dp_prompt_config(sensitivity, epsilon):
    return {"max_new_tokens": 128, "do_sample": True, "top_k": 0, "top_p": 1.0,
            "temperature": 2 * sensitivity / epsilon}

def rewrite(model, inputs, sensitivity, epsilon):
    return model.generate(**inputs, **dp_prompt_config(sensitivity, epsilon))
""",
        # twin: generate with the full vocabulary
        """
def privatize(model, tokenizer, text, clip_range, epsilon):
    ids = tokenizer(text, return_tensors="pt").input_ids
    out = model.generate(ids, do_sample=True, top_k=0, temperature=2 * clip_range / epsilon, max_new_tokens=40)
    return tokenizer.decode(out[0])
""",
        # ordinary ML: distillation temperature and a label-smoothing eps, no sampler
        """
import torch.nn.functional as F
def distill_loss(student, teacher, labels, temperature=2.0, eps=0.1):
    soft = F.kl_div(F.log_softmax(student / temperature, -1), F.softmax(teacher / temperature, -1))
    return soft + F.cross_entropy(student, labels, label_smoothing=eps)
""",
        # ordinary ML: a chatbot with nucleus sampling at a fixed temperature, no privacy
        """
from transformers import pipeline
generator = pipeline("text-generation", model="gpt2")
def reply(prompt):
    return generator(prompt, max_new_tokens=50, temperature=0.7, top_k=50, top_p=0.9, do_sample=True)
""",
    )

    INVALID = (
        # the pipeline decodes greedily at the ε temperature
        """
from transformers import pipeline
class Paraphraser:
    def __init__(self, model, tok, clip_range):
        self.sensitivity = clip_range
        self.pipe = pipeline("text-generation", model=model, tokenizer=tok)
    def privatize(self, text, epsilon):
        temperature = 2 * self.sensitivity / epsilon
        return self.pipe(text + " >>> ", max_new_tokens=64, temperature=temperature)[0]["generated_text"]  # <-
""",
        # sampling, but the config keeps the top-50 truncation
        """
def dp_prompt_config(sensitivity, epsilon):
    return {"max_new_tokens": 128, "do_sample": True, "top_k": 50,  # <-
            "temperature": 2 * sensitivity / epsilon}

def rewrite(model, inputs, sensitivity, epsilon):
    return model.generate(**inputs, **dp_prompt_config(sensitivity, epsilon))
""",
        # do_sample=True without top_k: generate's default top_k=50 applies
        """
def privatize(model, tokenizer, text, clip_range, epsilon):
    ids = tokenizer(text, return_tensors="pt").input_ids
    out = model.generate(ids, do_sample=True, temperature=2 * clip_range / epsilon, max_new_tokens=40)  # <-
    return tokenizer.decode(out[0])
""",
        # explicit greedy decoding, and a nucleus cut on the sampling variant
        """
def privatize(model, ids, sensitivity, epsilon, greedy=False):
    tau = 2 * sensitivity / epsilon
    if greedy:
        return model.generate(ids, do_sample=False, temperature=tau)  # <-
    return model.generate(ids, do_sample=True, top_k=0, top_p=0.95, temperature=tau)  # <-
""",
    )
