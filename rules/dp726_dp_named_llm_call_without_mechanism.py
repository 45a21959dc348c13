"""DP726: a function named as differentially private (``dp_paraphrase``, ``privatize_text``) whose whole
path is a call to a hosted LLM API, with no budget, noise or clipping anywhere on it."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words of a function name that claim differential privacy by themselves
_DP_WORDS = frozenset({"dp", "ldp", "privatize", "privatise", "privatized", "privatised", "differential",
                       "differentially"})
#: "private" claims DP only beside a text-release word (``private_rewrite``), not in ``get_private_key``
_TEXT_WORDS = frozenset({"paraphrase", "paraphrases", "rewrite", "rewrites", "text", "generate", "generation",
                         "prompt", "sanitize", "anonymize", "rephrase", "summarize", "summary", "query"})
#: hosted chat/completion endpoints: the caller sees only sampled text, so no logit clipping is possible
_API_TAILS = ("chat.completions.create", "ChatCompletion.create", "Completion.create", "completions.create",
              "messages.create", "responses.create", "ChatCompletion.acreate", "Completion.acreate")
_API_LASTS = frozenset({"generate_content", "generate_content_async"})
#: any of these in a name or call on the path counts as some mechanism or budget
_MECHANISM_WORDS = frozenset({"epsilon", "eps", "budget", "noise", "noisy", "laplace", "gaussian", "gumbel",
                              "exponential", "clip", "clamp", "sensitivity", "mechanism", "dp", "rho", "sigma"})


def _claims_dp(name: str) -> bool:
    w = words(name)
    return bool(w & _DP_WORDS) or ("private" in w and bool(w & _TEXT_WORDS))


def _api_call(call: cst.Call) -> bool:
    name = dotted(call.func) or ""
    return call_name(call) in _API_LASTS or any(name == t or name.endswith("." + t) for t in _API_TAILS)


class DpNamedLlmCallWithoutMechanism(Rule):
    id = "DP726"
    name = "dp-named-llm-call-without-mechanism"
    category = "general"
    severity = "error"
    summary = ("a function named as differentially private only prompts a hosted LLM API: no ε, noise or "
               "clipping on the path, so the 'DP' text has no guarantee")
    rationale = (
        "DP text rewriting with an LLM (DP-Prompt and its kin) is private only when each token is sampled with "
        "the exponential mechanism: logits clipped to a known range and the temperature set from ε "
        "(T = 2·range/ε). A hosted chat/completion API exposes neither the logits nor a clipping step, and a "
        "function that just formats the private text into a prompt and calls `client.chat.completions.create` "
        "(or `ChatCompletion.create`, `messages.create`, `generate_content`) with some temperature releases "
        "text with no privacy guarantee at all, however it is named. Reported: a function whose name claims DP "
        "(`dp_…`, `…_dp`, `privatize…`, `private_rewrite`) that reaches such an API call — directly or "
        "through functions of the same module — where no name on that path mentions ε, a budget, noise, "
        "clipping or a mechanism. Bad: `def dp_paraphrase(text): return client.chat.completions.create(...)`. "
        "Good: sample tokens from a local model with clipped logits and T derived from ε, and account for the "
        "number of tokens."
    )
    TRIGGERS = ("create", "generate_content")

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a function whose name claims DP and an API call (``…create`` /
        ``generate_content``) in the file."""
        if not facts.calls_any(frozenset({"create", "acreate"}) | _API_LASTS):
            return False
        return any(_claims_dp(fn.name) for fn in facts.functions)

    def visit_Module(self, node: cst.Module) -> None:
        functions: dict[str, cst.FunctionDef] = {}
        for stmt in node.body:
            if isinstance(stmt, cst.FunctionDef):
                functions[stmt.name.value] = stmt
            elif isinstance(stmt, cst.ClassDef):
                for sub in stmt.body.body:
                    if isinstance(sub, cst.FunctionDef):
                        functions.setdefault(sub.name.value, sub)
        for name, fn in functions.items():
            if not _claims_dp(name):
                continue
            found = self._path(fn, functions)
            if found is not None:
                self.report(
                    fn,
                    f"`{name}` is named as differentially private but only sends the text to a hosted LLM "
                    f"(`{dotted(found.func) or call_name(found)}`): no ε, noise or logit clipping is on the path, "
                    "so its output carries no DP guarantee; sample from a local model with clipped logits and "
                    "an ε-derived temperature, or drop the DP claim",
                )

    @staticmethod
    def _path(fn: cst.FunctionDef, functions: dict[str, cst.FunctionDef]) -> cst.Call | None:
        """The API call ``fn`` reaches through same-module functions, when no name on the way (parameters,
        names, attributes, keywords, called names) mentions a mechanism; else None."""
        seen: set[str] = set()
        todo = [fn]
        api: cst.Call | None = None
        while todo:
            cur = todo.pop()
            if cur.name.value in seen:
                continue
            seen.add(cur.name.value)
            if len(seen) > 6:
                return None
            for sub in walk(cur):
                ident = None
                if isinstance(sub, cst.Name):
                    ident = sub.value
                elif isinstance(sub, cst.Attribute):
                    ident = sub.attr.value
                if ident is not None and ident != fn.name.value and words(ident) & _MECHANISM_WORDS:
                    return None
                if isinstance(sub, cst.Call):
                    if _api_call(sub):
                        api = api or sub
                    elif call_name(sub) in functions:
                        todo.append(functions[call_name(sub)])
        return api

    VALID = (
        # twin: DP-Prompt done right, on a local model with clipped logits and an ε temperature
        """
import torch
def dp_paraphrase(text, model, tok, epsilon, clip=(-10.0, 10.0), max_len=64):
    ids = tok(f"Paraphrase: {text}", return_tensors="pt").input_ids
    temperature = 2 * (clip[1] - clip[0]) / epsilon
    for _ in range(max_len):
        logits = model(ids).logits[:, -1].clamp(*clip)
        nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1)
        ids = torch.cat([ids, nxt], 1)
    return tok.decode(ids[0])
""",
        # an API call with no DP claim in any name
        """
from openai import OpenAI
client = OpenAI()
def paraphrase(text, temperature=0.7):
    reply = client.chat.completions.create(model="gpt-4o-mini", temperature=temperature,
                                           messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content
""",
        # a DP-named function whose text comes from a noised embedding, then an API only to phrase it
        """
import numpy as np
from openai import OpenAI
client = OpenAI()
def dp_rewrite(embedding, epsilon, decode_prompt):
    noisy = embedding + np.random.laplace(0, 1 / epsilon, embedding.shape)
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": decode_prompt(noisy)}])
    return reply.choices[0].message.content
""",
        # ordinary ML: a chat helper named for a "private" endpoint, no text-release word
        """
from openai import AzureOpenAI
def private_endpoint_client(cfg):
    client = AzureOpenAI(azure_endpoint=cfg["url"], api_key=cfg["key"], api_version="2024-02-01")
    return client.chat.completions.create(model=cfg["model"], messages=[{"role": "user", "content": "ping"}])
""",
        # twin of the Gemini case: the API only judges text already privatised with an ε-mechanism
        """
import google.generativeai as genai
def dp_sanitize(doc, epsilon, mechanism):
    released = mechanism.rewrite(doc, epsilon)
    judge = genai.GenerativeModel("gemini-pro")
    return released, judge.generate_content("Rate fluency: " + released).text
""",
    )

    INVALID = (
        # the DP-named entry point formats a prompt and delegates to an API helper
        """
from openai import OpenAI
client = OpenAI()
def make_prompt(doc):
    return "Rewrite the following text:\\n" + doc
def dp_rewrite(doc, **kw):  # <-
    return ask(make_prompt(doc), **kw)
def ask(prompt, temperature=0.0, max_tokens=128):
    out = client.chat.completions.create(model="gpt-3.5-turbo", temperature=temperature, max_tokens=max_tokens,
                                         messages=[{"role": "user", "content": prompt}])
    return out.choices[0].message.content
""",
        # legacy openai module, a method of a 'privatizer'
        """
import openai
class TextPrivatizer:
    def privatize_text(self, text, temperature=1.5):  # <-
        resp = openai.ChatCompletion.create(model="gpt-3.5-turbo", temperature=temperature,
                                            messages=[{"role": "user", "content": "Paraphrase: " + text}])
        return resp["choices"][0]["message"]["content"]
""",
        # Gemini, the DP suffix on the name
        """
import google.generativeai as genai
def rewrite_ldp(doc, temperature=1.0):  # <-
    model = genai.GenerativeModel("gemini-pro")
    return model.generate_content("Paraphrase: " + doc, generation_config={"temperature": temperature}).text
""",
        # anthropic messages API behind a private_paraphrase wrapper
        """
import anthropic
_client = anthropic.Anthropic()
def _call(prompt, temperature):
    msg = _client.messages.create(model="claude-3-haiku", max_tokens=200, temperature=temperature,
                                  messages=[{"role": "user", "content": prompt}])
    return msg.content[0].text
def private_paraphrase(sentence, temperature=1.0):  # <-
    return _call("Paraphrase: " + sentence, temperature)
""",
    )
