"""Code that looks like a private release but is not one (precision hooks, fixer g37-4).

* :func:`evaluation_pass`: a slice ``x[i*b:(i+1)*b]`` inside a function named for evaluation, inference or
  generation (``evaluate``, ``predict``, ``discriminate_from``, ``sample_from``, ``generate``) that takes no
  training step: the chunks are an inference pass over given inputs, not the training batches an accountant's
  rate speaks for.
* :func:`randint_population`: the population a ``randint`` draws from (``np.random.randint(low, high, size)``,
  ``torch.randint(high, (size,))``), so a draw of class labels for a generator is not read as batch indices.
* :func:`full_batch`: ``batch_size = N`` where ``N`` is the very number of records the accountant is given:
  each step uses every record (q = 1), no amplification is credited.
"""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.clipping import ident
from dpcheck.analysis.syntax import call_name, walk, words

#: a function named for a pass that releases nothing by itself
_EVAL_WORDS = frozenset({"evaluate", "evaluation", "eval", "test", "predict", "prediction", "predictions", "infer",
                         "inference", "discriminate", "generate", "generation", "synthesize", "synthesise",
                         "score", "scores", "embed", "embedding", "embeddings", "encode", "visualize", "visualise",
                         "plot", "sample", "sampling", "reconstruct"})
#: … unless the name says it draws training batches (``sample_batch``, ``next_train_batch``)
_TRAIN_WORDS = frozenset({"batch", "batches", "minibatch", "lot", "lots", "next", "train", "training", "fit",
                          "step", "epoch", "update", "private", "dp", "noisy"})
#: calls that take a training step
_STEP_CALLS = frozenset({"backward", "step", "minimize", "apply_gradients", "compute_gradients", "zero_grad",
                         "train_on_batch", "fit", "grad", "gradients", "value_and_grad", "GradientTape"})
_STEP_NAMES = ("train_op", "train_step", "optimizer", "optim", "opt_op", "update_op")


def _function(fa, node: cst.CSTNode) -> cst.FunctionDef | None:  # noqa: ANN001 - FileAnalysis
    return fa.enclosing_function(node)


def takes_training_step(fn: cst.CSTNode) -> bool:
    """Does ``fn`` call a gradient step or name an optimizer / train op?"""
    for n in walk(fn):
        if isinstance(n, cst.Call) and call_name(n) in _STEP_CALLS:
            return True
        if isinstance(n, (cst.Name, cst.Attribute)):
            name = (ident(n) or "").lower().rsplit(".", 1)[-1]
            if any(s in name for s in _STEP_NAMES):
                return True
    return False


def evaluation_pass(fa, node: cst.CSTNode) -> bool:  # noqa: ANN001 - FileAnalysis
    """``node`` lies in a function named for evaluation, inference or generation that takes no training step."""
    fn = _function(fa, node)
    if fn is None:
        return False
    name = words(fn.name.value)
    if not name & _EVAL_WORDS or name & _TRAIN_WORDS:
        return False
    return not takes_training_step(fn)


def randint_population(call: cst.Call) -> cst.BaseExpression | None:
    """The exclusive upper bound a ``randint`` call draws below (``None`` when it cannot be told)."""
    for kw in ("high",):
        arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == kw), None)
        if arg is not None:
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None]
    if len(positional) >= 3:
        return positional[1]
    if len(positional) == 2:
        # ``torch.randint(high, (size,))`` / ``randint(high, size)`` vs ``np.random.randint(low, high)``
        if isinstance(positional[1], (cst.Tuple, cst.List)):
            return positional[0]
        return positional[1]
    if len(positional) == 1:
        return positional[0]
    return None


def full_batch(module: cst.Module, accounted: list[cst.Call]) -> bool:
    """``batch_size = N`` (or ``lot_size = N``) somewhere in the file, where ``N`` (a name) is also an argument of
    an accountant call: each batch is the whole training set, so q = 1 and no subsampling is credited."""
    if not accounted:
        return False
    given: set[str] = set()
    for call in accounted:
        for a in call.args:
            name = ident(a.value)
            if name:
                given.add(name)
    if not given:
        return False
    for n in walk(module):
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
            target = words(n.targets[0].target.value)
            if target & {"batch", "lot"} and target & {"size"} and ident(n.value) in given:
                return True
    return False


def column_pick(element: cst.SubscriptElement) -> bool:
    """``ids[a:b, k]`` with ``k`` a plain name (one column of an index table drawn per epoch): still rows a..b."""
    return isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Name)


#: calls that turn records into a results table or a saved report
_TABLE_CALLS = frozenset({"DataFrame", "from_records", "from_dict", "Series", "dump", "dumps", "to_csv",
                          "to_json", "writerow", "writerows", "log_metrics", "log_dict"})


def results_record(call: cst.Call, ancestors) -> bool:  # noqa: ANN001 - an iterable of ancestors, innermost first
    """``pd.DataFrame([{"best_j": curve["j"].max(), …}])``: the statistic is a field of a record handed to a
    results table (or a dumped report) in the same statement; it shapes no data and calibrates nothing."""
    in_record = False
    for anc in ancestors:
        if isinstance(anc, cst.DictElement):
            in_record = in_record or isinstance(anc.key, cst.SimpleString)
        elif isinstance(anc, cst.Call) and anc is not call:
            if in_record and call_name(anc) in _TABLE_CALLS:
                return True
            if not in_record:
                return False  # the statistic is an argument of some other computation first
        elif isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return False
    return False


def enumerate_counter(loop: cst.For) -> cst.Name | None:
    """The counter of ``for i, x in enumerate(xs)`` (``None`` for any other loop)."""
    if not (isinstance(loop.iter, cst.Call) and call_name(loop.iter) == "enumerate"):
        return None
    target = loop.target
    if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2 \
            and isinstance(target.elements[0].value, cst.Name):
        return target.elements[0].value
    return None
