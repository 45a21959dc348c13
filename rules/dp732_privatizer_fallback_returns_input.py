"""DP732: a privatizing function whose error path returns its private input unchanged."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import param_names, walk, words
from dpcheck.rule import Rule

#: pieces of the name of a function that privatizes its input
_PRIVATIZING = ("privati", "perturb", "anonymi", "anonymis", "sanitiz", "sanitis", "obfuscat", "randomiz",
                "randomis", "noisy", "add_noise")
_NOT_DATA = frozenset({"self", "cls", "eps", "epsilon", "delta", "sensitivity", "budget", "seed", "rng", "device",
                       "config", "cfg", "args", "kwargs", "verbose", "model", "tokenizer", "method", "k", "n"})


def _privatizing(name: str) -> bool:
    low = name.lower()
    return any(p in low for p in _PRIVATIZING)


class PrivatizerFallbackReturnsInput(Rule):
    id = "DP732"
    name = "privatizer-fallback-returns-input"
    category = "general"
    severity = "error"
    summary = "a privatizing function's `except` path returns its private input unperturbed"
    rationale = (
        "A function that privatizes a record, a token or a text (`privatize`, `perturb`, `anonymize`, "
        "`sanitize`) must release only perturbed output. When its error path catches a failure (a mask token "
        "not found after truncation to the model's window, a word missing from the vocabulary, a decoding "
        "error) and returns the input unchanged, every input that triggers the failure (long documents, rare "
        "words: properties of the private data) is released verbatim under the claimed ε, and whether it "
        "was perturbed at all is itself a function of the data. Reported: `return <parameter>` inside an "
        "`except` handler of a function whose name says it privatizes, where the parameter is the data (not "
        "ε, a model or a config). Fix: return a perturbed value on every path (sample from the mechanism over "
        "the whole output space, or drop the record), or let the error propagate."
    )
    TRIGGERS = ("except",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``try`` in a function with a privatizing name."""
        if not facts.nodes(ast.Try):
            return False
        return any(_privatizing(fn.name) for fn in facts.functions)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not _privatizing(node.name.value):
            return
        data = {p for p in param_names(node) if p not in _NOT_DATA and not words(p) & {"eps", "epsilon"}}
        if not data:
            return
        for sub in walk(node.body, into_scopes=False):
            if not isinstance(sub, cst.ExceptHandler):
                continue
            for ret in walk(sub.body, into_scopes=False):
                if isinstance(ret, cst.Return) and isinstance(ret.value, cst.Name) and ret.value.value in data:
                    self.report(ret, f"on this error path `{node.name.value}` returns its input `{ret.value.value}` "
                                     "unperturbed: inputs that fail (long texts, rare tokens) are released verbatim "
                                     "under the claimed ε; perturb on every path or drop the input")

    VALID = (
        # twin: a token the model cannot mask is replaced by a uniformly sampled token
        """
import random
def privatize_token(model, sentence, token, epsilon, vocab):
    try:
        pos = model.mask_position(sentence, token)
    except ValueError:
        return random.choice(vocab)
    return model.sample_replacement(sentence, pos, epsilon)
""",
        # twin: the error propagates
        """
import numpy as np
def perturb_text(embedder, text, epsilon):
    try:
        vecs = embedder.encode(text)
    except KeyError as err:
        raise ValueError("cannot privatize") from err
    return embedder.nearest(vecs + np.random.laplace(0, 1 / epsilon, vecs.shape))
""",
        # twin: the fallback returns a placeholder, never the input
        """
def sanitize_record(record, epsilon, mechanism):
    try:
        return mechanism.randomise(record, epsilon)
    except ValueError:
        return None
""",
        # ordinary ML: a data loader returns the raw sample when augmentation fails
        """
def augment(image, transform):
    try:
        return transform(image)
    except RuntimeError:
        return image
""",
    )

    INVALID = (
        # the token past the truncation window is returned as is
        """
def privatize_token(model, sentence, token, epsilon):
    try:
        pos = model.mask_position(sentence, token)
    except ValueError:
        return token  # <-
    return model.sample_replacement(sentence, pos, epsilon)
""",
        # an embedding lookup failure releases the word
        """
import numpy as np
def perturb_word(embedder, word, epsilon):
    try:
        vec = embedder[word]
    except KeyError:
        return word  # <-
    return embedder.nearest(vec + np.random.laplace(0, 1 / epsilon, vec.shape))
""",
        # a method of a text anonymizer
        """
class Rewriter:
    def anonymize(self, text, epsilon=1.0):
        try:
            out = self.pipe(text, temperature=2.0 / epsilon, do_sample=True, top_k=0)
        except Exception:
            return text  # <-
        return out[0]["generated_text"]
""",
        # randomized response that gives up on unknown categories
        """
import numpy as np
def randomize_response(value, categories, epsilon):
    try:
        idx = categories.index(value)
    except ValueError:
        return value  # <-
    p = np.exp(epsilon) / (np.exp(epsilon) + len(categories) - 1)
    return value if np.random.rand() < p else categories[(idx + 1) % len(categories)]
""",
    )
