"""DP657: a text sanitiser releases every token outside its candidate table verbatim."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astnames import dotted as ast_dotted
from dpcheck.analysis.syntax import call_name, dotted, loop_targets, walk, words
from dpcheck.analysis.vocabulary import NOISE_DRAWS
from dpcheck.rule import Rule

_PRIVACY_TEXT = re.compile(r"(?i)epsilon|\beps\b|privacy|privati[sz]|sanitiz|differential|\bdp\b|\bldp\b")
#: words of a helper that replaces a token by a randomised one
_MECHANISM_WORDS = frozenset({"mechanism", "privatize", "privatise", "sanitize", "sanitise", "perturb", "sample",
                              "randomize", "exponential", "noisy", "replace"})
_COLLECT = frozenset({"append", "extend", "add", "write"})
#: draws that randomise a token when called as a method (``np.random.choice``, ``rng.sample``)
_RANDOM_METHODS = NOISE_DRAWS | {"choice", "choices", "sample", "multinomial", "categorical"}


def _randomising(last: str, method: bool) -> bool:
    return method and last in _RANDOM_METHODS or bool(words(last) & _MECHANISM_WORDS)


def _randomised(expr: cst.CSTNode) -> bool:
    for n in walk(expr):
        if isinstance(n, cst.Call):
            name = call_name(n) or ""
            if _randomising(name.split(".")[-1], isinstance(n.func, cst.Attribute)):
                return True
    return False


def _ast_membership(test: ast.AST) -> bool:
    """Could ``_bypass_test`` find a token's membership test in ``test`` (``x not in t``, ``x in t``, or-ed)?"""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(_ast_membership(v) for v in test.values)
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn)) \
        and ast_dotted(test.left) is not None


def _bypass_test(test: cst.BaseExpression, token: str) -> bool | None:
    """``token not in table`` (alone or as an ``or`` term): True = the body is the out-of-table branch;
    ``token in table`` (alone): False = the else branch is. None otherwise."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return True if _bypass_test(test.left, token) is True or _bypass_test(test.right, token) is True else None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and dotted(test.left) == token:
        op = test.comparisons[0].operator
        if isinstance(op, cst.NotIn):
            return True
        if isinstance(op, cst.In):
            return False
    return None


def _emits_verbatim(block: cst.CSTNode, token: str) -> cst.Call | None:
    """``out.append(token)`` (or ``+= [token]``) with the token itself."""
    for n in walk(block):
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in _COLLECT \
                and n.args and dotted(n.args[0].value) == token:
            return n
    return None


class TokenBypassesMechanism(Rule):
    id = "DP657"
    name = "token-bypasses-mechanism"
    category = "general"
    severity = "error"
    summary = "a text sanitiser releases every token outside its candidate table verbatim"
    rationale = (
        "Word-level text privatisation (CusText, SanText and their kin) replaces each token by one drawn "
        "from its candidate set with exponential-mechanism probabilities. When the loop sends every token that "
        "is *not* in the candidate table (`if word not in sim_word_dict: new.append(word)`) straight to the "
        "output, out-of-vocabulary words — names, rare words, typos, numbers, exactly the identifying ones — are "
        "released unchanged and the per-token ε-guarantee covers only the words that were in the table. "
        "Reported: in a loop over tokens, a membership test on the token whose out-of-table branch appends the "
        "token itself to the output while the other branch appends a randomised one, in a module that speaks of "
        "privacy. Not reported: out-of-table tokens replaced by a sample from the whole vocabulary, an `[UNK]` "
        "or dropped; a public stop-word list that is the only bypass. Fix: map every out-of-table token to a "
        "draw over the whole output vocabulary (or to a placeholder) so that no token leaves unperturbed."
    )
    TRIGGERS = (" in ",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is, in a module that speaks of privacy, a membership test in a loop, a collecting call
        (``out.append(token)``) and a randomising one."""
        if not facts.nodes(ast.For, ast.AsyncFor) \
                or not any(_ast_membership(node.test) for node in facts.nodes(ast.If)):  # type: ignore[attr-defined]
            return False
        if not any(isinstance(c.func, ast.Attribute) and c.func.attr in _COLLECT and (c.args or c.keywords)
                   for c in facts.calls):
            return False
        if not any(_randomising(last, isinstance(c.func, ast.Attribute)) for c in facts.calls
                   for last in facts.call_lasts(c)):
            return False
        return _PRIVACY_TEXT.search(facts.source) is not None

    VALID = (
        # out-of-table tokens become a placeholder, table tokens a draw: nothing leaves unperturbed
        """
import numpy as np
def privatize_text(sentences, candidates, probs, epsilon):
    out = []
    for s in sentences:
        new = []
        for tok in s.split():
            if tok not in candidates:
                new.append("[UNK]")
            else:
                new.append(np.random.choice(candidates[tok], p=probs[tok]))
        out.append(" ".join(new))
    return out
""",
        # out-of-table tokens are drawn from the whole output vocabulary with the same ε
        """
import random
def sanitize(tokens, table, vocab, epsilon):
    released = []
    for w in tokens:
        if w in table:
            released.append(exp_mechanism(table[w], epsilon))
        else:
            released.append(exp_mechanism(vocab, epsilon))
    return released
""",
        # ordinary NLP augmentation (EDA synonym replacement): no privacy claim in the module
        """
import random
def synonym_swap(words_in, synonyms):
    out = []
    for w in words_in:
        if w not in synonyms:
            out.append(w)
        else:
            out.append(random.choice(synonyms[w]))
    return out
""",
        # only public stop words pass through; every other token is sampled
        """
import numpy as np
STOP = {"the", "a", "of"}
def ldp_rewrite(text, near, p, epsilon):
    new = []
    for word in text.split():
        if word in STOP:
            new.append(word)
        else:
            new.append(np.random.choice(near.get(word, ["[UNK]"]), p=p.get(word)))
    return " ".join(new)
""",
    )

    INVALID = (
        # the out-of-table branch (with an optional stop-word bypass) keeps the token
        """
import numpy as np
def privatize_corpus(df, near_words, probs, keep_stop, stop_words, epsilon):
    rows = []
    for line in df.text:
        new = []
        for word in line.split():
            if (keep_stop and word in stop_words) or (word not in near_words):  # <-
                new.append(word)
            else:
                new.append(np.random.choice(near_words[word], 1, p=probs[word])[0])
        rows.append(" ".join(new))
    return rows
""",
        # the in-table test with the verbatim else branch; the sampler is a helper
        """
def sanitize_tokens(tokens, candidate_table, epsilon):
    out = []
    for t in tokens:
        if t in candidate_table:  # <-
            out.append(exponential_mechanism(candidate_table[t], epsilon))
        else:
            out.append(t)
    return out
""",
        # torch multinomial draw over the neighbours; unknown words pass through
        """
import torch
def dp_paraphrase(words_in, neighbours, weights, eps):
    result = []
    for w in words_in:
        if w not in neighbours:  # <-
            result.append(w)
            continue
        idx = torch.multinomial(weights[w], 1).item()
        result.append(neighbours[w][idx])
    return result
""",
        # random.choices with privacy weights; numbers perturbed, other unknown tokens kept
        """
import random
def ldp_text(sentence, sims, ws, epsilon):
    kept = []
    for token in sentence.split():
        if token not in sims:  # <-
            kept.append(token)
        else:
            kept.append(random.choices(sims[token], weights=ws[token])[0])
    return kept
""",
    )

    def visit_If(self, node: cst.If) -> None:
        loops = self._loops(node)
        if not loops:
            return
        tokens = loop_targets(loops[0])
        for token in tokens:
            side = _bypass_test(node.test, token)
            if side is None:
                continue
            bypass = node.body if side else node.orelse
            other = node.orelse if side else node.body
            if bypass is None or _emits_verbatim(bypass, token) is None:
                continue
            # the randomised branch: the else, or (``continue`` in the bypass) the rest of the loop body
            rest: cst.CSTNode | None = other
            if rest is None and any(isinstance(n, cst.Continue) for n in walk(bypass)):
                rest = loops[0].body
            if rest is None or not _randomised(rest):
                continue
            if not _PRIVACY_TEXT.search(self.ctx.source):
                return
            self.report(node.test, f"every `{token}` outside the candidate table is appended to the output "
                                   "verbatim: out-of-vocabulary tokens (names, rare words) leave unperturbed and "
                                   "the ε-guarantee covers only in-table tokens; replace them by a draw over the "
                                   "whole output vocabulary or a placeholder")
            return

    def _loops(self, node: cst.CSTNode) -> list[cst.For]:
        out = []
        cur = self.ctx.analysis.parent(node)
        while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Module)):
            if isinstance(cur, cst.For):
                out.append(cur)
            cur = self.ctx.analysis.parent(cur)
        return out
