"""DP550: the vocabulary (token or item set) of a DP-trained model is read from the private records."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.domainflow import evaluation
from dpcheck.analysis.syntax import call_name, dotted, param_names, target_names, walk, words
from dpcheck.codetext import code_and_fstrings
from dpcheck.rule import Rule

#: code text of a module that trains a model with DP (DP-SGD engines and their knobs)
_DP_TRAINING = re.compile(
    r"make_private|PrivacyEngine|DPKeras\w*|DPGradientDescent\w*|DPAdam\w*|DPSGD|dp_sgd|dpsgd|noise_multiplier"
    r"|private_transformers|jax_privacy|DPOptimizer|DPDataLoader")
#: identifiers of a module doing DP work besides training (an accountant, a mechanism, a budget)
_DP_WORDS = re.compile(r"\b(?:epsilon|privacy_engine|accountant|compute_sigma\w*|get_noise_multiplier|rdp\w*|dp_\w+|\w+_dp)\b")
#: words of a module helper that builds a vocabulary (``_build_vocab(texts)``, ``get_vocab_SST2(data_dir)``)
_VOCAB_HELPER = frozenset({"vocab", "vocabulary", "word2idx", "word2id", "w2i", "tok2id", "dictionary"})
#: calls that build a vocabulary from the texts they are given
_VOCAB_BUILDERS = frozenset({"build_vocab_from_iterator", "Dictionary", "Word2Vec", "FastText"})
#: transformers whose fit learns a vocabulary
_VOCAB_FITTED = frozenset({"Tokenizer", "CountVectorizer", "TfidfVectorizer", "HashingVectorizer"})
_VOCAB_FITS = frozenset({"fit_on_texts", "fit", "fit_transform"})
#: wrappers a token set passes through unchanged in kind
_SET_CALLS = frozenset({"set", "frozenset", "sorted", "Counter"})
#: words of an iterable that is not the private training records
_NOT_PRIVATE = frozenset({
    "public", "pub", "pretrained", "pretrain", "test", "val", "valid", "validation", "eval", "dev", "holdout",
    "synthetic", "synth", "syn", "generated", "gen", "fake", "sample", "samples", "reference", "ref",
    "vocab", "vocabulary", "alphabet", "charset", "special", "stopwords", "labels", "label", "classes",
    "marginal", "marginals", "workload", "clique", "cliques", "attr", "attrs", "columns", "cols", "queries",
    "domain", "schema", "keys", "parts", "probabilities", "probs",
    "query", "request", "requests", "req", "spec", "specs", "config", "cfg", "params", "args", "options",
    "settings",
})
#: words of an iterable that holds the records
_RECORD_WORDS = frozenset({
    "text", "texts", "sentence", "sentences", "sents", "corpus", "doc", "docs", "document", "documents",
    "data", "dataset", "train", "training", "record", "records", "review", "reviews", "tweet", "tweets",
    "line", "lines", "sequence", "sequences", "seqs", "session", "sessions", "history", "histories",
    "example", "examples", "dialog", "dialogs", "dialogues", "messages", "posts", "emails", "notes",
    "transactions", "baskets", "trajectories", "trajs", "tokens", "tokenized", "raw", "x",
})


def _iter_words(expr: cst.BaseExpression) -> frozenset[str]:
    out: set[str] = set()
    for node in walk(expr):
        if isinstance(node, cst.Name):
            out |= words(node.value)
        elif isinstance(node, cst.Attribute):
            out |= words(node.attr.value)
        elif isinstance(node, cst.SimpleString):
            out |= words(re.sub(r"\W", "_", node.value))
    return frozenset(out)


def _records(expr: cst.BaseExpression, params: set[str]) -> bool:
    """An iterable of the private records: data-named or a parameter, not public/test/pretrained."""
    names = _iter_words(expr)
    if names & _NOT_PRIVATE:
        return False
    return bool(names & _RECORD_WORDS)


def _uses(expr: cst.BaseExpression, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in walk(expr))


def _nested_tokens(comp: cst.BaseExpression, params: set[str]) -> bool:
    """A comprehension running over the records and, inside, over each record's tokens
    (``{w for t in texts for w in t.split()}``)."""
    if not isinstance(comp, (cst.SetComp, cst.GeneratorExp, cst.ListComp, cst.DictComp)):
        return False
    outer = comp.for_in
    inner = outer.inner_for_in
    if inner is None or not _records(outer.iter, params):
        return False
    return any(_uses(inner.iter, n) for n in target_names(outer.target))


def _token_set(value: cst.BaseExpression, params: set[str]) -> bool:
    """``value`` builds the set (or counts) of the tokens the records hold."""
    node = value
    for _ in range(4):
        if isinstance(node, cst.Call) and call_name(node) in _SET_CALLS | {"most_common", "keys"}:
            if isinstance(node.func, cst.Attribute) and call_name(node) in ("most_common", "keys"):
                node = node.func.value
                continue
            if not node.args:
                return False
            node = node.args[0].value
            continue
        break
    if isinstance(node, cst.SetComp) or node is not value and isinstance(node, (cst.GeneratorExp, cst.ListComp)):
        return _nested_tokens(node, params)
    if isinstance(node, cst.Call) and call_name(node) in ("chain", "from_iterable") and node.args:
        return _records(node.args[0].value, params) and node is not value
    return False


def _loop_builder(loop: cst.For, params: set[str], containers: frozenset[str] = frozenset(),
                  handles: frozenset[str] = frozenset()) -> tuple[cst.CSTNode, str] | None:
    """``for t in texts: for w in t.split(): vocab.add(w)`` (or ``counts[w] += 1``, ``d[w] = len(d)``,
    ``counter.update(t.split())``): the statement that fills the vocabulary, and its name."""
    root = _handle_root(loop.iter)
    if root is not None and f"!{root}" in handles:
        return None  # the lines of a reference file the module reads nowhere else
    if not (_records(loop.iter, params) or root in handles):
        return None
    outer = target_names(loop.target)
    # a container (re)bound inside the loop is per record (``word_cnt = {}`` for each example), not a vocabulary
    rebound = {n for a in walk(loop.body) if isinstance(a, cst.Assign) for t in a.targets
               for n in target_names(t.target)}
    # names computed from the record inside the loop (``text = line[0]; toks = tokenize(text)``) count as
    # its tokens once a tokenising call is on the way (not an index's column: ``vals = X[:, i]``)
    computed, tokens_of = set(outer), set(outer)
    for _ in range(3):
        for a in walk(loop.body):
            if isinstance(a, cst.Assign) and any(_uses(a.value, n) for n in computed):
                names = {n for t in a.targets for n in target_names(t.target)}
                computed |= names
                if any(_uses(a.value, n) for n in tokens_of - set(outer)) or any(
                        isinstance(c, cst.Call) and words(call_name(c)) & _TOKENISING for c in walk(a.value)):
                    tokens_of |= names
    for node in walk(loop.body):
        if isinstance(node, cst.For) and any(_uses(node.iter, n) for n in tokens_of) \
                and not _iter_words(node.iter) & _NOT_PRIVATE:
            tokens = target_names(node.target)
            checked = _range_checked(node.body, tokens)
            for stmt in walk(node.body):
                if stmt in checked:
                    continue
                filled = _fills(stmt, tokens)
                if filled and filled not in rebound:
                    return stmt, filled
        if isinstance(node, cst.Call) and call_name(node) == "update" and isinstance(node.func, cst.Attribute) \
                and node.args and _tokens_of(node.args[0].value, outer) and dotted(node.func.value):
            target = dotted(node.func.value) or ""
            if target in rebound:
                continue
            if words(target) & {"vocab", "vocabulary", "counter", "counts", "freq", "freqs", "word", "words",
                                "token", "tokens", "items", "w2i", "word2idx", "word2id", "tok2id"} \
                    or target in containers:
                return node, target
    return None


#: called names that cut a text into tokens
_TOKENISING = frozenset({"split", "tokenize", "tokenise", "tokenizer", "tokens", "words", "ngrams", "findall",
                         "word", "encode", "nlp", "tokenizers"})
#: words of a file path that is no corpus: a public embedding or vocabulary file
_PUBLIC_FILES = frozenset({"glove", "embedding", "embeddings", "embed", "vectors", "vec", "word2vec", "fasttext",
                           "stopwords", "dict", "lexicon"})


def _handle_root(expr: cst.BaseExpression) -> str | None:
    """``fh``, ``tqdm(fh, total=n)``, ``enumerate(fh)``: the name of the file handle iterated."""
    while isinstance(expr, cst.Call) and call_name(expr) in {"tqdm", "enumerate", "iter", "islice"} and expr.args:
        expr = expr.args[0].value
    return expr.value if isinstance(expr, cst.Name) else None


def _corpus_handles(fn: cst.FunctionDef) -> frozenset[str]:
    """Names of files the function opens for reading whose path names no public, held-out or vocabulary
    file (``with open(os.path.join(data_dir, split + ".tsv")) as fh``): its lines are the records."""
    out: set[str] = set()
    for n in walk(fn.body, into_scopes=False):
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        if isinstance(n, cst.With):
            pairs = [(i.item, i.asname.name) for i in n.items if i.asname is not None]
        elif isinstance(n, cst.Assign) and len(n.targets) == 1:
            pairs = [(n.value, n.targets[0].target)]
        for value, target in pairs:
            if isinstance(value, cst.Call) and call_name(value) == "open" and value.args \
                    and isinstance(target, cst.Name):
                mode = [a.value for a in value.args[1:2] if a.keyword is None] + [
                    a.value for a in value.args if a.keyword is not None and a.keyword.value == "mode"]
                if any(isinstance(m, cst.SimpleString) and any(c in m.value for c in "wa") for m in mode):
                    continue
                if not _iter_words(value.args[0].value) & (_NOT_PRIVATE | _PUBLIC_FILES):
                    out.add(target.value)
    return frozenset(out)


_PATH_CALLS = frozenset({"join", "open", "Path", "read_csv", "read_table", "read_json", "glob", "listdir", "load_dataset"})


def _corpus_reread(fn: cst.FunctionDef, module: cst.Module, params: set[str]) -> bool:
    """Does the module read, outside ``fn``, a path built from the parameter ``fn`` builds its file paths
    from (``os.path.join(args.data_dir, name)`` beside ``get_vocab(data_dir)``)? Then the files the
    vocabulary is counted from are the data the module processes (sanitises, trains on), not a reference
    corpus named once."""
    path_params = {n.value for c in walk(fn.body) if isinstance(c, cst.Call) and call_name(c) in _PATH_CALLS
                   for a in c.args for n in walk(a.value) if isinstance(n, cst.Name) and n.value in params}
    if not path_params:
        return False
    inside = {id(n) for n in walk(fn)}
    for c in walk(module):
        if isinstance(c, cst.Call) and id(c) not in inside and call_name(c) in _PATH_CALLS:
            for a in c.args:
                for n in walk(a.value):
                    last = n.attr.value if isinstance(n, cst.Attribute) else n.value if isinstance(n, cst.Name) else None
                    if last in path_params:
                        return True
    return False


def _tokens_of(expr: cst.BaseExpression, outer: set[str]) -> bool:
    """``t``, ``t.split()``, ``tokenize(t)``, ``tokenizer.tokenize(t.lower())``: the tokens of a record."""
    if isinstance(expr, cst.Name):
        return expr.value in outer
    if isinstance(expr, cst.Call) and any(_uses(expr, n) for n in outer):
        return bool(words(call_name(expr)) & {"split", "tokenize", "tokens", "words", "tokenizer", "word", "tokenise"})
    return False


def _fills(stmt: cst.CSTNode, tokens: set[str]) -> str | None:
    if isinstance(stmt, cst.Call) and call_name(stmt) in ("add", "append") and isinstance(stmt.func, cst.Attribute) \
            and stmt.args and isinstance(stmt.args[0].value, cst.Name) and stmt.args[0].value.value in tokens:
        return dotted(stmt.func.value)
    if isinstance(stmt, (cst.Assign, cst.AugAssign)):
        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
        for t in targets:
            if isinstance(t, cst.Subscript) and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index) \
                    and isinstance(t.slice[0].slice.value, cst.Name) and t.slice[0].slice.value.value in tokens:
                owner = dotted(t.value)
                if isinstance(stmt, cst.Assign) and not _index_or_count(stmt.value, owner):
                    return None
                return owner
    return None


def _index_or_count(value: cst.BaseExpression, owner: str | None) -> bool:
    """``d[w] = len(d)`` (the next index), ``d[w] = d.get(w, 0) + 1`` or a number (a count per token);
    ``widths[key] = len(str(value))`` sizes something else and is no index of the tokens."""
    for n in walk(value):
        if isinstance(n, cst.Integer):
            return True
        if isinstance(n, cst.Call) and call_name(n) == "len" and n.args and dotted(n.args[0].value) == owner:
            return True
        if isinstance(n, cst.Call) and call_name(n) == "get" and isinstance(n.func, cst.Attribute) \
                and dotted(n.func.value) == owner:
            return True
    return False


def _range_checked(body: cst.CSTNode, tokens: set[str]) -> set[cst.CSTNode]:
    """Statements under ``if t >= size:`` (an ordering test of the token itself): the tokens kept are
    the ones out of a range (a validation), not the set of tokens that occur; and under ``if t in keywords:``
    (only the tokens of a given set are counted)."""
    out: set[cst.CSTNode] = set()
    for node in walk(body):
        if isinstance(node, cst.If) and isinstance(node.test, cst.Comparison) and any(
                isinstance(c.operator, (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual))
                for c in node.test.comparisons) and any(
                isinstance(x, cst.Name) and x.value in tokens
                for x in (node.test.left, *(c.comparator for c in node.test.comparisons))):
            out.update(walk(node.body))
        # ``if w in keywords: counts[w] += 1``: only the words of a given set are counted; the set, not the
        # records, is the vocabulary (``if w not in vocab`` is the builder's own test and stays)
        if isinstance(node, cst.If) and isinstance(node.test, cst.Comparison) \
                and isinstance(node.test.left, cst.Name) and node.test.left.value in tokens \
                and len(node.test.comparisons) == 1 and isinstance(node.test.comparisons[0].operator, cst.In):
            out.update(walk(node.body))
    return out


class PrivateVocabulary(Rule):
    id = "DP550"
    name = "private-vocabulary"
    category = "metadata"
    severity = "error"
    summary = ("the vocabulary (token or item set) of a model trained with DP-SGD is read from the private "
               "records without noise")
    rationale = (
        "A model trained with DP-SGD protects what the gradients carry, not what its shape is built from. When "
        "its vocabulary — the words of the training texts, the items of the users' histories — is the set of "
        "tokens the private records hold (`{w for t in texts for w in t.split()}`, `Counter(...)`, a loop filling "
        "`word2idx`, Keras `Tokenizer.fit_on_texts`, torchtext `build_vocab_from_iterator`, gensim "
        "`Dictionary`/`Word2Vec`, a fitted `CountVectorizer`), a token only one record holds becomes a row of the "
        "released embedding and output layer and an entry of the saved vocabulary: the model's shape and "
        "index reveal it outside the privacy budget. The same holds for a word-level text sanitiser (metric-LDP / "
        "exponential mechanism over words) whose candidate words are the vocabulary counted from the texts it "
        "sanitises: every output word shows that it occurs in the private corpus. Reported: in a module that "
        "trains with DP (Opacus `make_private`/`PrivacyEngine`, TF Privacy `DPKeras*`, a `noise_multiplier`) or "
        "names a budget (`epsilon`), a token set built from an iterable of the records (data-named or a "
        "parameter, also the lines of a data file, tokens reached through names computed from each line), in DP "
        "context. Not reported: a vocabulary from a "
        "pretrained tokenizer or a vocabulary or embedding file, from public/test/validation/synthetic texts, a "
        "fixed alphabet, code in functions named for evaluation, plots or tests, modules without DP training. Fix: take the vocabulary "
        "from public text or a pretrained tokenizer, or select it with a DP mechanism (noisy counts above a "
        "threshold) charged to the budget."
    )
    TRIGGERS = ("make_private", "PrivacyEngine", "DPKeras", "DPSGD", "dp_sgd", "dpsgd", "noise_multiplier",
                "private_transformers", "jax_privacy", "DPOptimizer", "DPDataLoader", "DPGradientDescent", "DPAdam",
                "rivacy", "psilon", "opacus", "sigma")
    requires_dp_context = False  # the text gate: a loader module of a DP project rarely has DP context itself

    @classmethod
    def applies_to(cls, source: str) -> bool:
        if not super().applies_to(source):
            return False
        code = code_and_fstrings(source)
        return _DP_TRAINING.search(code) is not None or _DP_WORDS.search(code) is not None

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A comprehension with two ``for`` clauses, a loop inside a loop, or a call that builds a
        vocabulary (a builder, a fitted tokenizer/vectorizer, a vocabulary-named helper)."""
        if not super().may_report(facts):
            return False
        if any(len(c.generators) >= 2 for c in facts.nodes(ast.SetComp, ast.GeneratorExp, ast.ListComp, ast.DictComp)):
            return True
        if any(isinstance(n, ast.For) for loop in facts.nodes(ast.For) for n in ast.walk(loop) if n is not loop):
            return True
        called = facts.called
        return bool(called & (_VOCAB_BUILDERS | _VOCAB_FITTED | {"fit_on_texts"})) or any(
            words(name) & _VOCAB_HELPER for name in called)

    def visit_Module(self, node: cst.Module) -> None:
        reported: set[int] = set()
        for fn in (n for n in walk(node) if isinstance(n, cst.FunctionDef)):
            if evaluation(fn) or words(fn.name.value) & {"eval", "evaluate", "evaluation", "test", "plot", "public"}:
                continue
            params = set(param_names(fn)) - {"self", "cls"}
            containers = frozenset(
                n for a in walk(fn.body, into_scopes=False) if isinstance(a, cst.Assign)
                and (isinstance(a.value, cst.Call) and call_name(a.value) in {"Counter", "set", "defaultdict"}
                     and not a.value.args or isinstance(a.value, cst.Dict))
                for t in a.targets for n in target_names(t.target))
            opened = _corpus_handles(fn)
            # files counted that the module does not process otherwise are a reference corpus
            handles = opened if opened and _corpus_reread(fn, node, params) else frozenset()
            handles = frozenset(handles) | frozenset(f"!{h}" for h in opened - handles)
            for stmt in walk(fn.body, into_scopes=False):
                found = self._build(stmt, params, containers, handles)
                if found is not None and id(found) not in reported:
                    reported.add(id(found))
                    code = self.ctx.analysis.code(found).strip()
                    self.report(
                        found,
                        f"`{code[:80]}` builds the vocabulary from the private records: a token only one record "
                        "holds becomes a row of the DP-trained model's embedding/output and of its saved "
                        "vocabulary (or a word the DP mechanism can output), outside the privacy budget; take it "
                        "from public text or a pretrained "
                        "tokenizer, or select it with a DP mechanism",
                    )

    @staticmethod
    def _build(stmt: cst.CSTNode, params: set[str], containers: frozenset[str] = frozenset(),
               handles: frozenset[str] = frozenset()) -> cst.CSTNode | None:
        if isinstance(stmt, (cst.Assign, cst.AnnAssign)) and stmt.value is not None:
            value = stmt.value
            if _token_set(value, params):
                return stmt
            if isinstance(value, cst.DictComp) and value.for_in.inner_for_in is None:
                inner = value.for_in.iter
                while isinstance(inner, cst.Call) and call_name(inner) in {"enumerate", "sorted", "set", "list"} and inner.args:
                    inner = inner.args[0].value
                if _token_set(inner, params) or _nested_tokens(inner, params):
                    return stmt
            if isinstance(value, cst.Call) and call_name(value) in _VOCAB_BUILDERS and value.args:
                arg = value.args[0].value
                if _records(arg, params) or isinstance(arg, (cst.Call, cst.GeneratorExp)) \
                        and not _iter_words(arg) & _NOT_PRIVATE:
                    return stmt  # a generator over the records (``build_vocab_from_iterator(yield_tokens())``)
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.args \
                    and words(value.func.value) & _VOCAB_HELPER and _records(value.args[0].value, params):
                return stmt  # ``vocab = _build_vocab(train_texts)``: a helper building it from the records
        if isinstance(stmt, cst.Call) and call_name(stmt) in _VOCAB_FITS and isinstance(stmt.func, cst.Attribute) \
                and stmt.args and _records(stmt.args[0].value, params):
            receiver = stmt.func.value
            kind = call_name(receiver) if isinstance(receiver, cst.Call) else ""
            holder = dotted(receiver) or ""
            if kind in _VOCAB_FITTED or call_name(stmt) == "fit_on_texts" or (
                    not kind and words(holder) & {"tokenizer", "vectorizer", "tok"}):
                return stmt
        if isinstance(stmt, cst.For):
            built = _loop_builder(stmt, params, containers, handles)
            if built is not None:
                return built[0]
        return None

    VALID = (
        # twin: only the words of a fixed, public topic list are counted from the messages (then noised);
        # the list, not the messages, is the set of keys released
        """
from collections import Counter
import numpy as np
def topic_counts(messages, topic_words, epsilon):
    tally = Counter()
    for msg in messages:
        for tok in msg.lower().split():
            if tok in topic_words:
                tally[tok] += 1
    return {w: tally[w] + np.random.laplace(0, 1 / epsilon) for w in topic_words}
""",
        # twin: the candidate words are counted from a reference corpus the module reads nowhere else; the
        # texts it sanitises are handed in
        """
import os
from collections import Counter
import numpy as np
def reference_words(ref_dir, tokenizer):
    counts = Counter()
    with open(os.path.join(ref_dir, "wiki.txt")) as fh:
        for line in fh:
            pieces = [t.text for t in tokenizer(line.strip())]
            for piece in pieces:
                counts[piece] += 1
    return [w for w, _ in counts.most_common()]
def sanitize(tokens, words, embed, epsilon):
    probs = np.exp(-epsilon * np.linalg.norm(embed[tokens][:, None] - embed[None], axis=-1) / 2)
    return [words[np.random.choice(len(words), p=p / p.sum())] for p in probs]
""",
        # twin: the sanitiser's candidate words are the public embedding's vocabulary file
        """
import numpy as np
def build_word_space(glove_path):
    words = []
    with open(glove_path) as fh:
        for line in fh:
            words.append(line.split(" ", 1)[0])
    return words
def sanitize(tokens, words, embed, epsilon):
    probs = np.exp(-epsilon * np.linalg.norm(embed[tokens][:, None] - embed[None], axis=-1) / 2)
    return [words[np.random.choice(len(words), p=p / p.sum())] for p in probs]
""",
        # ordinary ML code whose `epsilon` is a sampling cut-off: ids collected only when out of range
        # (a validation), and a per-column width table, are no vocabulary of the records
        """
class BiasProcessor:
    def __init__(self, sequence_bias, epsilon=3e-4):
        self.sequence_bias, self.epsilon = sequence_bias, epsilon

    def check(self, vocabulary_size):
        bad = []
        for sequence in self.sequence_bias:
            for token in sequence:
                if token >= vocabulary_size:
                    bad.append(token)
        return bad

def table(lines, epsilon=1e-8):
    widths = {}
    for line in lines:
        for key in line:
            widths[key] = len(str(line[key]))
    return widths
""",
        # the set is the column names of the user's query specification, not values of the records
        """
from opacus import PrivacyEngine
def show_dp_requests(dict_query, epsilon):
    data_query = dict_query()
    vars_by = {val for req in data_query.values() for val in req.get("by", [])}
    return sorted(vars_by), epsilon
""",
        # twin: the vocabulary comes from a pretrained tokenizer
        """
from transformers import AutoTokenizer
from opacus import PrivacyEngine
def train_dp_lm(private_texts, noise_multiplier, make_model, optimizer):
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = make_model(len(tokenizer))
    return PrivacyEngine().make_private(module=model, optimizer=optimizer, data_loader=None,
                                        noise_multiplier=noise_multiplier, max_grad_norm=1.0), tokenizer
""",
        # twin: the token set is read from public text
        """
import torch
from opacus import PrivacyEngine
def train_dp_lm(private_texts, public_texts, noise_multiplier, make_model):
    vocab = sorted({w for t in public_texts for w in t.split()})
    model = make_model(len(vocab))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return PrivacyEngine().make_private(module=model, optimizer=opt, data_loader=None,
                                        noise_multiplier=noise_multiplier, max_grad_norm=1.0)
""",
        # twin: the vocabulary file is given
        """
import json
import tensorflow as tf
from tensorflow_privacy import DPKerasAdamOptimizer
def train(texts, labels, vocab_path, noise_multiplier):
    with open(vocab_path) as f:
        word2idx = json.load(f)
    x = [[word2idx.get(w, 1) for w in t.split()] for t in texts]
    opt = DPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=noise_multiplier, num_microbatches=1)
    return x, opt
""",
        # ordinary NLP code: a vocabulary from the training texts, no DP training anywhere
        """
import torch
def build(train_texts):
    vocab = sorted({w for t in train_texts for w in t.split()})
    model = torch.nn.Embedding(len(vocab), 64)
    return model, torch.optim.Adam(model.parameters(), eps=1e-8)
""",
        # a fixed alphabet (characters of a constant), and the test set's vocabulary in an evaluation function
        """
import string
from opacus import PrivacyEngine
ALPHABET = sorted(set(string.ascii_lowercase + " "))
def evaluate(model, test_texts):
    oov = {w for t in test_texts for w in t.split()}
    return len(oov)
def train(model, optimizer, loader, noise_multiplier):
    return PrivacyEngine().make_private(module=model, optimizer=optimizer, data_loader=loader,
                                        noise_multiplier=noise_multiplier, max_grad_norm=1.0)
""",
        # a flat set of labels (the target's class count), not tokens of records
        """
from opacus import PrivacyEngine
def train(texts, labels, make_model, optimizer, noise_multiplier):
    classes = sorted(set(labels))
    model = make_model(len(classes))
    return PrivacyEngine().make_private(module=model, optimizer=optimizer, data_loader=None,
                                        noise_multiplier=noise_multiplier, max_grad_norm=1.0)
""",

        # per-example word counts that filter generated texts: the counter is rebuilt for each example
        """
from opacus import PrivacyEngine
def filter_generated(examples, max_repeat, noise_multiplier):
    kept = []
    for example in examples:
        word_cnt = {}
        for word in example["text"].split():
            word_cnt[word] = word_cnt.get(word, 0) + 1
        if max(word_cnt.values()) <= max_repeat:
            kept.append(example)
    return kept
""",
    )

    INVALID = (
        # the twin's counting without the fixed topic list: every word a message holds becomes a released key
        """
from collections import Counter
import numpy as np
def topic_counts(messages, epsilon):
    tally = Counter()
    for msg in messages:
        for tok in msg.lower().split():
            if tok not in tally:
                tally[tok] = 0  # <-
            tally[tok] += 1
    return {w: c + np.random.laplace(0, 1 / epsilon) for w, c in tally.items()}
""",
        # a word-level sanitiser: the candidate words are counted from the lines of the files it sanitises,
        # the tokens reached through names computed from each line
        """
import os
from collections import Counter
import numpy as np
def build_word_space(data_dir, tokenizer):
    counts = Counter()
    for split in ["train", "dev"]:
        with open(os.path.join(data_dir, split + ".tsv")) as fh:
            for line in fh:
                sentence = line.strip().split("\\t")[0]
                pieces = [t.text for t in tokenizer(sentence)]
                for piece in pieces:
                    counts[piece] += 1  # <-
    return [w for w, _ in counts.most_common()]
def sanitize(tokens, words, embed, epsilon):
    probs = np.exp(-epsilon * np.linalg.norm(embed[tokens][:, None] - embed[None], axis=-1) / 2)
    return [words[np.random.choice(len(words), p=p / p.sum())] for p in probs]
def sanitize_split(data_dir, split, words, embed, epsilon):
    with open(os.path.join(data_dir, split + ".tsv")) as fh:
        return [sanitize(line.split(), words, embed, epsilon) for line in fh]
""",
        # (from the benchmark's misses, B31-008) a module helper counts the training texts' tokens; the loader
        # of a DP-SGD project calls it on the training split
        """
from collections import Counter
def _build_vocab(texts, vocab_size, min_freq=2):
    c = Counter()
    for t in texts:
        c.update(_basic_tokenize(t))  # <-
    return {tok: i for i, (tok, f) in enumerate(c.most_common(vocab_size)) if f >= min_freq}
def load_arrays(vocab_size=30000):
    train_texts, test_texts = _load_raw()
    vocab = _build_vocab(train_texts, vocab_size=vocab_size)  # <-
    return encode(train_texts, vocab), encode(test_texts, vocab)
def compute_sigma_th(steps, sampler="poisson"):
    return steps ** 0.5
""",
        # Opacus: the vocabulary is every word the private texts hold
        """
import torch
from opacus import PrivacyEngine
def train_dp_lm(private_texts, noise_multiplier, make_model):
    vocab = sorted({w for t in private_texts for w in t.split()})  # <-
    model = make_model(len(vocab))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return PrivacyEngine().make_private(module=model, optimizer=opt, data_loader=None,
                                        noise_multiplier=noise_multiplier, max_grad_norm=1.0)
""",
        # the 10,000 most frequent words of the training texts (exact counts, no threshold noise)
        """
import torch
from collections import Counter
from opacus import PrivacyEngine
def train_dp_lm(train_texts, noise_multiplier, make_model):
    counts = Counter(w for t in train_texts for w in t.split())  # <-
    vocab = {w: i for i, (w, _) in enumerate(counts.most_common(10000))}
    model = make_model(len(vocab))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return PrivacyEngine().make_private(module=model, optimizer=opt, data_loader=None,
                                        noise_multiplier=noise_multiplier, max_grad_norm=1.0), vocab
""",
        # TF1-style script: a loop fills word2idx from the training sentences before DP-SGD
        """
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer import DPGradientDescentGaussianOptimizer
def main(train_sentences, args):
    word2idx = {"<pad>": 0}
    for sent in train_sentences:
        for tok in sent.lower().split():
            if tok not in word2idx:
                word2idx[tok] = len(word2idx)  # <-
    opt = DPGradientDescentGaussianOptimizer(l2_norm_clip=args.clip, noise_multiplier=args.noise_multiplier,
                                             num_microbatches=args.microbatches, learning_rate=args.lr)
    return word2idx, opt
""",
        # Keras: the tokenizer is fitted on the private texts
        """
import tensorflow as tf
from tensorflow_privacy import DPKerasAdamOptimizer
def train(x_text, y, noise_multiplier):
    tokenizer = tf.keras.preprocessing.text.Tokenizer(num_words=20000)
    tokenizer.fit_on_texts(x_text)  # <-
    seqs = tokenizer.texts_to_sequences(x_text)
    opt = DPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=noise_multiplier, num_microbatches=1)
    return seqs, opt
""",
        # torchtext: build_vocab_from_iterator over the training split, inside a trainer class
        """
from torchtext.vocab import build_vocab_from_iterator
from opacus import PrivacyEngine
class DPTextTrainer:
    def __init__(self, train_data, noise_multiplier):
        self.vocab = build_vocab_from_iterator(tokenize(t) for t in train_data)  # <-
        self.noise_multiplier = noise_multiplier
    def fit(self, model, optimizer, loader):
        return PrivacyEngine().make_private(module=model, optimizer=optimizer, data_loader=loader,
                                            noise_multiplier=self.noise_multiplier, max_grad_norm=1.0)
""",
        # a recommender: the item set is every item the users' histories hold
        """
from opacus import PrivacyEngine
def train(histories, make_model, optimizer, noise_multiplier):
    items = sorted({i for h in histories for i in h})  # <-
    model = make_model(num_items=len(items))
    return PrivacyEngine().make_private(module=model, optimizer=optimizer, data_loader=None,
                                        noise_multiplier=noise_multiplier, max_grad_norm=1.0)
""",
    )
