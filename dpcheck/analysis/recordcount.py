"""A record count derived at run time from the data, followed through locals, helpers and objects.

``n`` in ``delta = 1 / n ** 2`` is the private size when its value is, after any number of local hops:

* ``len(x)`` / ``x.shape[0]`` / ``np.size(x)`` of a set that is not held out, a shape unpacked
  (``n, d = X_train.shape``), a count of matching records (``np.sum(labels == k)``, ``mask.sum()``),
  the count a helper named for one returns (``self.num_examples(train_loader)``),
  or the line count of a data file that is not held out (``sum(1 for line in open(path)) - 1``);
* the count of one entry of a per-part container (``len(indices_class[c])``: one class's, client's share);
* the ``min``/``max``/``sum`` of such counts (a comprehension of them, or a list whose items are
  assigned them: ``sizes[i] = len(part[i])``, ``sizes.append(len(part))``);
* that count scaled by constants or truncated (``int(n_m * 2 * 0.8)``);
* a parameter defaulting to the enclosing scope's count of the same name (``def f(steps, N=N)``);
* the slot of the module's own helper that returns it (``load(...)[-1]``, ``a, n = load(...)``);
* a slot unpacked beside the training data from a loader defined elsewhere
  (``X_train, y_train, n, d = GetDataset(name)``);
* a count attribute of a data object (``full_data.n`` of ``full_data = GeneralData(...)``);
* an attribute of ``self`` that the class binds once, to such a count of the data it holds
  (``self.data_num = len(self.data)``, ``self.n = self.X.shape[0]``).

Configuration (``args.n``), parameters, literals, public bounds (``n_max``) and held-out sets are not
counts of the private records.
"""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.syntax import call_name, number, walk, words

#: a data set that is not the private training data
HELD_OUT = frozenset({"test", "val", "valid", "validation", "eval", "dev", "holdout", "batch", "batches", "public",
                      "synthetic", "synth", "fake", "generated", "aux", "auxiliary", "loader", "features",
                      "feature", "columns", "cols", "attributes", "classes", "bins", "dims", "orders", "alphas",
                      "steps", "epochs", "rounds", "iterations", "layers", "params", "queries", "keys", "str",
                      "clients", "silos", "users", "workers", "machines", "domain", "categories", "vocab"})
#: configuration objects: their counts are settings
CONFIG = frozenset({"args", "cfg", "config", "conf", "opt", "opts", "flags", "params", "hparams", "hp",
                    "settings", "options", "parser", "self", "cls"})
#: names of a slot or attribute holding a number of records
_COUNT_SLOT = frozenset({"n", "N", "m", "num_samples", "n_samples", "nsamples", "n_train", "num_train", "ntrain",
                         "train_size", "n_rows", "nrows", "num_rows", "n_records", "num_records", "n_obs",
                         "num_examples", "n_examples", "data_size", "dataset_size", "sample_size"})
#: attribute names that only hold the number of records (read on ``self`` where a base class binds them)
_INHERITED_COUNT = frozenset({"nrows", "n_rows", "num_rows", "n_samples", "num_samples", "n_records", "num_records",
                              "n_train", "num_train", "n_train_samples", "num_train_samples", "dataset_size",
                              "train_size", "n_examples", "num_examples"})
#: an adjacency matrix or graph: its row count is the number of nodes, public under edge-level DP
_GRAPH = frozenset({"adj", "adjacency", "graph", "graphs", "g", "nodes", "node"})
_WRAPPERS = frozenset({"int", "float", "round", "floor", "ceil", "abs"})
_AGGREGATES = frozenset({"min", "max", "sum", "amin", "amax"})
#: calls that turn a comprehension of per-part counts into a vector (``np.asarray([len(x) for x in parts])``)
_VECTORS = frozenset({"asarray", "array", "tensor", "Tensor", "list", "tuple"})


def _target_name(node: cst.CSTNode) -> str | None:
    while isinstance(node, (cst.Subscript, cst.Call)):
        node = node.value if isinstance(node, cst.Subscript) else node.func
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _private_target(node: cst.CSTNode) -> bool:
    name = _target_name(node)
    if name is None:
        return False
    pieces = frozenset().union(*(words(p) for p in name.split(".")))
    last = name.split(".")[-1]
    if pieces & _GRAPH or last == "A" or last.startswith("A_"):
        return False  # the node count of a graph's adjacency matrix: public under edge-level DP
    return not pieces & (HELD_OUT | CONFIG)


def _is_constant(expr: cst.BaseExpression) -> bool:
    if number(expr) is not None:
        return True
    return isinstance(expr, cst.BinaryOperation) and _is_constant(expr.left) and _is_constant(expr.right)


def _counted_data(expr: cst.BaseExpression) -> bool:
    """The data a counting helper is handed (``self.num_examples(train_dataloader)``): a set that is not
    held out; a loader counts here, since the helper counts its examples, not its batches."""
    name = _target_name(expr)
    if name is None or isinstance(expr, cst.Call):
        return False
    pieces = frozenset().union(*(words(p) for p in name.split(".")))
    return not pieces & ((HELD_OUT - {"loader"}) | CONFIG | _GRAPH)


#: a container of per-part record lists: ``indices_class[c]``, ``client_data[k]``, ``silo_rows[i]``
_PART_WORDS = frozenset({"class", "client", "party", "silo", "part", "parts", "group", "groups", "shard", "shards",
                         "per", "partition", "partitions"})


def _one_part(expr: cst.BaseExpression) -> bool:
    """``len(indices_class[c])``: the count of one entry (chosen by a variable) of a per-part container."""
    if not (isinstance(expr, cst.Call) and call_name(expr) == "len" and len(expr.args) == 1):
        return False
    arg = expr.args[0].value
    if not (isinstance(arg, cst.Subscript) and len(arg.slice) == 1 and isinstance(arg.slice[0].slice, cst.Index)
            and isinstance(arg.slice[0].slice.value, (cst.Name, cst.Attribute))):
        return False
    name = _target_name(arg.value)
    return name is not None and bool(words(name.split(".")[-1]) & _PART_WORDS)


def _file_lines(expr: cst.BaseExpression) -> bool:
    """``1 for line in open(path)``: one per line of a file that is not held out (a record per row)."""
    if not (isinstance(expr, cst.GeneratorExp) and number(expr.elt) == 1 and expr.for_in.inner_for_in is None
            and not expr.for_in.ifs):
        return False
    source = expr.for_in.iter
    if not (isinstance(source, cst.Call) and call_name(source) == "open" and source.args):
        return False
    path = source.args[0].value
    return not (isinstance(path, (cst.Name, cst.Attribute)) and not _private_target(path))


def _direct_count(expr: cst.BaseExpression) -> str | None:
    """``len(x)``, ``x.shape[0]``, ``np.size(x)``, ``np.sum(y == k)``, ``mask.sum()`` of private data."""
    if isinstance(expr, cst.Call):
        name = call_name(expr)
        if name in ("len", "size") and expr.args and _private_target(expr.args[0].value) \
                and not (isinstance(expr.args[0].value, cst.Call) and call_name(expr.args[0].value) == "str"):
            return "counted from the data"
        if name in ("sum", "count_nonzero") and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.Comparison):
            compared = expr.args[0].value.left
            if _private_target(compared) and not _is_constant(compared):
                return "a count of matching records"
        if name is not None and (name in _COUNT_SLOT or name.startswith("get_") and name[4:] in _COUNT_SLOT) \
                and len(name) > 1 and len(expr.args) == 1 and expr.args[0].keyword is None \
                and _counted_data(expr.args[0].value):
            return "counted from the data"
        if name == "sum" and len(expr.args) == 1 and _file_lines(expr.args[0].value):
            return "the line count of the data file"
        if name in ("sum", "count_nonzero") and not expr.args and isinstance(expr.func, cst.Attribute):
            owner = expr.func.value
            if isinstance(owner, cst.Attribute) and "mask" in words(owner.attr.value) and _private_target(owner.value):
                return "a count of masked records"
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape" \
            and expr.slice and isinstance(expr.slice[0].slice, cst.Index) and number(expr.slice[0].slice.value) == 0 \
            and _private_target(expr.value.value):
        return "counted from the data"
    return None


def _index_zero(sub: cst.Subscript) -> bool:
    return len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) and number(sub.slice[0].slice.value) == 0


def _rows_of(node: cst.BaseExpression) -> bool:
    """Whose first dimension counts records: data not held out (``features`` too: a feature matrix's rows
    are records, though ``len(features)`` elsewhere counts columns), or a data set ``self`` holds."""
    name = _target_name(node)
    if name is None:
        return False
    if name.startswith("self.") and name.count(".") == 1:
        from dpcheck.analysis.vocabulary import is_dataset_name
        last = name[5:]
        return (is_dataset_name(last) or last in ("features", "inputs")) and not words(last) & (
            (HELD_OUT - {"features"}) | _GRAPH)
    pieces = frozenset().union(*(words(p) for p in name.split(".")))
    if pieces & {"features", "feature"} and not pieces & ((HELD_OUT - {"features", "feature"}) | CONFIG | _GRAPH):
        return True
    return _private_target(node)


def _row_count(expr: cst.BaseExpression) -> str | None:
    """The first dimension read the framework way: ``X.size(0)`` (torch), ``X.size()[0]``,
    ``tf.shape(X)[0]`` / ``np.shape(X)[0]`` / ``jnp.shape(X)[0]``, of data that is not held out."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size" \
            and len(expr.args) == 1 and expr.args[0].keyword is None and number(expr.args[0].value) == 0 \
            and _rows_of(expr.func.value):
        return "the row count of the data"
    if isinstance(expr, cst.Subscript) and _index_zero(expr) and isinstance(expr.value, cst.Call):
        inner = expr.value
        if isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "size" and not inner.args \
                and _rows_of(inner.func.value):
            return "the row count of the data"
        if call_name(inner) == "shape" and isinstance(inner.func, cst.Attribute) and len(inner.args) == 1 \
                and _rows_of(inner.args[0].value):
            return "the row count of the data"
    return None


def _one_part_rows(expr: cst.BaseExpression) -> bool:
    """``class_data.size(0)``, ``client_X.shape[0]``: the rows of a set named for one class or client."""
    node = expr.func.value if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) else \
        expr.value.value if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) else \
        expr.value.args[0].value if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Call) \
        and expr.value.args else None
    name = _target_name(node) if node is not None else None
    return name is not None and bool(words(name.split(".")[-1]) & {"class", "client", "silo", "party", "group"})


#: calls that tabulate records into counts (the table's total is the record count)
_TABULATE = frozenset({"bincount", "value_counts", "Counter", "crosstab", "histogram", "histogramdd", "histogram2d"})


def _strip_scalar(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x.sum().item()``, ``(y == k).float().sum()``: drop the conversions around a count."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and not expr.args \
            and expr.func.attr.value in ("item", "float", "long", "int", "double", "numpy", "cpu", "tolist"):
        expr = expr.func.value
    return expr


def _class_comparison(expr: cst.BaseExpression) -> bool:
    """``labels == c`` / ``y.eq(k)`` with the class a variable (``labels == 3`` is one fixed class)."""
    expr = _strip_scalar(expr)
    if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1 \
            and isinstance(expr.comparisons[0].operator, cst.Equal):
        left, right = expr.left, expr.comparisons[0].comparator
    elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "eq" \
            and len(expr.args) == 1:
        left, right = expr.func.value, expr.args[0].value
    else:
        return False
    if not (isinstance(right, cst.Name) and _private_target(left)) or isinstance(left, cst.Call):
        return False
    if words(_target_name(left) or "") & _PREDICTED or words(right.value) & (_PREDICTED | _LABEL_SETS):
        return False  # ``preds == labels``: a count of correct predictions, not of one class
    return True


#: predictions compared with labels count correct answers, not a class's records
_PREDICTED = frozenset({"pred", "preds", "prediction", "predictions", "predicted", "output", "outputs", "logits",
                        "yhat", "hat", "argmax", "guess", "guesses", "scores"})
_LABEL_SETS = frozenset({"labels", "targets", "true", "gt", "truth", "ys"})


def _class_count(expr: cst.BaseExpression) -> str | None:
    """The number of records of one class chosen by a variable: ``np.sum(y == c)``,
    ``(targets == k).sum().item()``, ``len(X[y == c])``, ``len(np.where(y == c)[0])``."""
    expr = _strip_scalar(expr)
    if not isinstance(expr, cst.Call):
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
                and expr.value.attr.value == "shape" and _index_zero(expr):
            owner = expr.value.value
            if isinstance(owner, cst.Subscript) and len(owner.slice) == 1 \
                    and isinstance(owner.slice[0].slice, cst.Index) and _class_comparison(owner.slice[0].slice.value):
                return "the record count of one class"
        return None
    name = call_name(expr)
    if name in ("sum", "count_nonzero") and len(expr.args) == 1 and _class_comparison(expr.args[0].value):
        return "the record count of one class"
    if name in ("sum", "count_nonzero") and not expr.args and isinstance(expr.func, cst.Attribute) \
            and _class_comparison(expr.func.value):
        return "the record count of one class"
    if name == "len" and len(expr.args) == 1:
        arg = expr.args[0].value
        if isinstance(arg, cst.Subscript) and len(arg.slice) == 1 and isinstance(arg.slice[0].slice, cst.Index):
            index = arg.slice[0].slice.value
            if _class_comparison(index):
                return "the record count of one class"
            if isinstance(arg.value, cst.Call) and call_name(arg.value) in ("where", "nonzero") \
                    and number(index) == 0 and arg.value.args and _class_comparison(arg.value.args[0].value):
                return "the record count of one class"
    return None


def _self_data_count(expr: cst.BaseExpression) -> str | None:
    """``len(self.data)``, ``self.X.shape[0]``, ``len(self.train_df)``: the row count of the data set
    the object holds (``self`` is otherwise a configuration owner, see ``CONFIG``)."""
    from dpcheck.analysis.vocabulary import is_dataset_name
    target = None
    if isinstance(expr, cst.Call) and call_name(expr) in ("len", "size") and len(expr.args) == 1:
        target = expr.args[0].value
    elif isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
            and expr.value.attr.value == "shape" and len(expr.slice) == 1 \
            and isinstance(expr.slice[0].slice, cst.Index) and number(expr.slice[0].slice.value) == 0:
        target = expr.value.value
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
            and target.value.value == "self"):
        return None
    name = target.attr.value
    if words(name) & (HELD_OUT | _GRAPH) or not is_dataset_name(name):
        return None
    return f"the row count of the data `self.{name}` the object holds"


class RecordCounts:
    """Follow a value to a count of the private records (see the module docstring)."""

    def __init__(self, fa) -> None:  # type: ignore[no-untyped-def]
        self.fa = fa
        #: set when the count found is one part's own (the min/max over the parts' counts, or an item
        #: of the vector of per-part counts) rather than the size of one data set
        self.per_part = False

    def of_part(self, expr: cst.BaseExpression) -> str | None:
        """Like ``of``, but only a count of one part among several (``min(len(d) for d in client_sets)``,
        ``sizes[k]`` of ``sizes = np.asarray([len(x) for x in silos])``): a party's own record count."""
        found = self.count(expr)
        return found if found is not None and self.per_part else None

    def count(self, expr: cst.BaseExpression) -> str | None:
        """``expr`` itself a record count (``len(X)``, ``min(len(d) for d in parts)``), or reading one (``of``)."""
        self.per_part = False
        found = self._value(expr, 8, frozenset())
        return found if found is not None else self.of(expr)

    def of(self, expr: cst.BaseExpression) -> str | None:
        """A description of the run-time record count ``expr`` reads, or None."""
        self.per_part = False
        for node in walk(expr):
            if isinstance(node, (cst.Call, cst.Subscript)):
                found = _class_count(node) or self._extra_count(node)
                if found is not None:
                    return f"`{self.fa.code(node).strip()}`, {found}"
            if isinstance(node, cst.Name):
                found = self._name(node, 8, frozenset())
                if found is not None:
                    return f"`{node.value}`, {found}"
            elif isinstance(node, cst.Attribute):
                found = self._self_count(node, 8, frozenset())
                if found is not None:
                    return f"`self.{node.attr.value}`, {found}"
        return None

    def _extra_count(self, expr: cst.BaseExpression) -> str | None:
        """Counts read without ``len``/``.shape[0]``: ``X.size(0)``, ``tf.shape(X)[0]``, the total of a
        count table of the data (``np.bincount(y).sum()``, ``table.sum()`` of ``df[c].value_counts()``),
        the line count of a data file opened with ``with open(path) as f`` (``sum(1 for _ in f)``)."""
        found = _row_count(expr)
        if found is not None:
            return found
        expr = _strip_scalar(expr)
        if not isinstance(expr, cst.Call):
            return None
        name = call_name(expr)
        table: cst.BaseExpression | None = None
        if name == "sum" and not expr.args and isinstance(expr.func, cst.Attribute):
            table = expr.func.value
        elif name == "sum" and len(expr.args) == 1 and expr.args[0].keyword is None:
            table = expr.args[0].value
            if isinstance(table, cst.Call) and call_name(table) == "values" and not table.args \
                    and isinstance(table.func, cst.Attribute):
                table = table.func.value  # ``sum(Counter(y).values())``
            if isinstance(table, cst.GeneratorExp):
                return self._handle_lines(table)
        if table is None:
            return None
        if self._tabulated(table):
            return "the total of a count table of the data"
        return None

    def _tabulated(self, table: cst.BaseExpression) -> bool:
        """``np.bincount(y)``, ``df[c].value_counts()``, ``df.groupby(c).size()``, ``Counter(records)``,
        ``np.histogram(x)[0]`` of data that is not held out, directly or through one local."""
        if isinstance(table, cst.Name):
            binding = self.fa.binding(table)
            if binding is None or binding.value is None:
                return False
            if binding.kind == "assign":
                return self._tabulates(binding.value)
            if binding.kind == "unpack" and isinstance(binding.value, cst.Call) \
                    and call_name(binding.value) in ("histogram", "histogramdd", "histogram2d") \
                    and isinstance(binding.stmt, cst.Assign) and len(binding.stmt.targets) == 1 \
                    and isinstance(binding.stmt.targets[0].target, (cst.Tuple, cst.List)) \
                    and binding.stmt.targets[0].target.elements[0].value is binding.target:
                return self._tabulates(binding.value)
            return False
        if isinstance(table, cst.Subscript) and isinstance(table.value, cst.Call) and _index_zero(table) \
                and call_name(table.value) in ("histogram", "histogramdd", "histogram2d"):
            return self._tabulates(table.value)
        return self._tabulates(table)

    @staticmethod
    def _tabulates(call: cst.BaseExpression) -> bool:
        if not isinstance(call, cst.Call):
            return False
        name = call_name(call)
        if name == "value_counts" and isinstance(call.func, cst.Attribute):
            return _private_target(call.func.value) and "normalize" not in {
                a.keyword.value for a in call.args if a.keyword is not None}
        if name == "size" and not call.args and isinstance(call.func, cst.Attribute) \
                and isinstance(call.func.value, cst.Call) and call_name(call.func.value) == "groupby" \
                and isinstance(call.func.value.func, cst.Attribute):
            return _private_target(call.func.value.func.value)
        if name in _TABULATE and call.args and call.args[0].keyword is None:
            if any(a.keyword is not None and a.keyword.value in ("weights", "density", "normed") for a in call.args):
                return False
            return _private_target(call.args[0].value)
        return False

    def _handle_lines(self, gen: cst.GeneratorExp) -> str | None:
        """``sum(1 for _ in f)`` with ``with open(path) as f`` (``path`` not named as a held-out file)."""
        if number(gen.elt) != 1 or gen.for_in.inner_for_in is not None or gen.for_in.ifs \
                or not isinstance(gen.for_in.iter, cst.Name):
            return None
        binding = self.fa.binding(gen.for_in.iter)
        if binding is None or binding.kind != "with" or not isinstance(binding.value, cst.Call) \
                or call_name(binding.value) != "open" or not binding.value.args:
            return None
        path = binding.value.args[0].value
        name = _target_name(path)
        if name is not None and frozenset().union(*(words(p) for p in name.split("."))) & HELD_OUT:
            return None
        if isinstance(path, cst.SimpleString) and words(path.value) & HELD_OUT:
            return None
        return "the line count of the data file"

    def _loop_part(self, expr: cst.BaseExpression) -> bool:
        """``len(idx)`` with ``for g, idx in groups.items()``: the count of one part, taken in a loop over
        a container of parts (classes, clients, groups)."""
        if not (isinstance(expr, cst.Call) and call_name(expr) == "len" and len(expr.args) == 1
                and isinstance(expr.args[0].value, cst.Name)):
            return False
        binding = self.fa.binding(expr.args[0].value)
        if binding is None or binding.kind not in ("loop", "unpack") or not isinstance(binding.stmt, cst.For):
            return False
        source = binding.stmt.iter
        while isinstance(source, cst.Call):
            if call_name(source) in ("items", "values") and isinstance(source.func, cst.Attribute):
                source = source.func.value
            elif call_name(source) == "enumerate" and source.args:
                source = source.args[0].value
            else:
                return False
        name = _target_name(source)
        return name is not None and bool(words(name.split(".")[-1]) & _PART_WORDS)

    def _sum_of_counts_parameter(self, call: cst.Call) -> str | None:
        """``sum(sample_counts)`` of a parameter named as the per-client (per-part) record counts
        (``sample_counts``, ``client_dataset_sizes``, ``num_examples_per_client``): the exact total."""
        if call_name(call) != "sum" or len(call.args) != 1 or not isinstance(call.args[0].value, cst.Name):
            return None
        arg = call.args[0].value
        binding = self.fa.binding(arg)
        if binding is None or binding.kind != "param":
            return None
        pieces = words(arg.value)
        if not (pieces & {"sample", "samples", "example", "examples", "record", "records", "dataset", "data"}
                and pieces & {"counts", "sizes", "count", "size", "num", "lens", "lengths"}) \
                or pieces & (HELD_OUT - {"clients", "silos", "users", "workers"}) or pieces & CONFIG:
            return None
        return f"the sum of the record counts `{arg.value}` the parties reported"

    def _self_count(self, attr: cst.Attribute, hops: int, seen: frozenset) -> str | None:
        """``self.data_num`` bound exactly once in the class, to ``len(self.data)`` (or a count of it)."""
        if not (isinstance(attr.value, cst.Name) and attr.value.value == "self") or hops <= 0:
            return None
        pieces = words(attr.attr.value)
        if pieces & (HELD_OUT | CONFIG | {"noisy", "noised", "private", "dp", "max", "min", "bound", "public"}):
            return None
        cls = self.fa.enclosing_class(attr)
        if cls is None:
            return None
        bindings = self.fa.attribute_bindings(cls, attr.attr.value)
        if not bindings and attr.attr.value in _INHERITED_COUNT and any(
                isinstance(b.value, (cst.Name, cst.Attribute)) for b in cls.bases):
            # ``self.nrows`` read in a mixin/subclass, bound by a base class elsewhere
            # (``self.nrows, self.ncols = data.shape``): the record count of the data the model holds
            return "a record count the base class binds"
        if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None \
                or id(bindings[0].target) in seen:
            return None
        value = bindings[0].value
        counted = _self_data_count(value)
        if counted is not None:
            return counted
        return self._value(value, hops - 1, seen | {id(bindings[0].target)})

    # ------------------------------------------------------------------ values
    def _value(self, expr: cst.BaseExpression, hops: int, seen: frozenset) -> str | None:
        if hops <= 0:
            return None
        one_class = _class_count(expr)
        if one_class is not None:
            self.per_part = True
            return one_class
        extra = self._extra_count(expr)
        if extra is not None:
            if _one_part_rows(expr):
                self.per_part = True
                return f"the record count of one part ({extra})"
            return extra
        direct = _direct_count(expr)
        if direct is not None and self._loop_part(expr):
            self.per_part = True
            return f"the record count of one part ({direct}, over a loop of the parts)"
        if direct is not None:
            if _one_part(expr):
                self.per_part = True
                return f"the record count of one part ({direct})"
            return direct
        if isinstance(expr, cst.Name):
            return self._name(expr, hops, seen)
        if isinstance(expr, cst.BinaryOperation) and isinstance(
                expr.operator, (cst.Multiply, cst.Divide, cst.FloorDivide, cst.Add, cst.Subtract)):
            if self._constant(expr.right):
                return self._value(expr.left, hops, seen)
            if self._constant(expr.left) and isinstance(expr.operator, (cst.Multiply, cst.Add)):
                return self._value(expr.right, hops, seen)
            return None
        if isinstance(expr, cst.Call):
            name = call_name(expr)
            if name in _WRAPPERS and len(expr.args) >= 1:
                return self._value(expr.args[0].value, hops - 1, seen)
            if name in _AGGREGATES and expr.args:
                return self._aggregate(expr, hops, seen) or self._sum_of_counts_parameter(expr)
            if name in _VECTORS and len(expr.args) >= 1 and isinstance(expr.args[0].value, (cst.ListComp,
                                                                                         cst.GeneratorExp)):
                return self._value(expr.args[0].value, hops, seen)
            return None
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            # ``[len(x) for x in x_train]``: one record count per part (client, silo, shard)
            found = self._value(expr.elt, hops - 1, seen)
            if found is not None:
                self.per_part = True
                return f"one of the per-part record counts ({found})"
            return None
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Call) and len(expr.slice) == 1 \
                and isinstance(expr.slice[0].slice, cst.Index):
            index = number(expr.slice[0].slice.value)
            if index is not None and index == int(index):
                return self._helper_slot(expr.value, int(index), None, hops, seen)
        if isinstance(expr, cst.Attribute):
            return self._object_count(expr, hops, seen) or self._self_count(expr, hops, seen)
        return None

    def _constant(self, expr: cst.BaseExpression) -> bool:
        """A literal, or a name bound once to arithmetic of literals (``q = 1 / 7``)."""
        if _is_constant(expr):
            return True
        if isinstance(expr, cst.Name):
            binding = self.fa.binding(expr)
            return binding is not None and binding.kind == "assign" and binding.value is not None \
                and _is_constant(binding.value)
        return False

    def _aggregate(self, call: cst.Call, hops: int, seen: frozenset) -> str | None:
        """``min(sizes)``, ``min([np.sum(y == k) for k in ...])``, ``sum(len(p) for p in parts)``."""
        items = [a.value for a in call.args if a.keyword is None]
        if len(items) > 1:  # ``max(n, 1)``: the count beside a constant
            counted = [self._value(i, hops - 1, seen) for i in items if not _is_constant(i)]
            return counted[0] if counted and all(counted) else None
        item = items[0] if items else None
        if isinstance(item, (cst.ListComp, cst.GeneratorExp)):
            found = self._value(item.elt, hops - 1, seen)
            if found and call_name(call) in ("min", "max", "amin", "amax"):
                self.per_part = True  # the smallest (largest) part's own count
            return f"the {call_name(call)} of record counts ({found})" if found else None
        if isinstance(item, cst.Name):
            found = self._list_of_counts(item, hops - 1, seen)
            if found and call_name(call) in ("min", "max", "amin", "amax"):
                self.per_part = True
            return found
        return None

    def _list_of_counts(self, name: cst.Name, hops: int, seen: frozenset) -> str | None:
        """A list whose items are record counts: ``sizes[i] = len(part[i])`` / ``sizes.append(len(p))``."""
        fa = self.fa
        binding = fa.binding(name)
        if binding is None or binding.kind != "assign":
            return None
        scope = fa.enclosing_function(name) or fa.module
        key = name.value
        for node in walk(scope, into_scopes=False):
            value: cst.BaseExpression | None = None
            if isinstance(node, cst.Assign) and len(node.targets) == 1:
                target = node.targets[0].target
                if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == key:
                    value = node.value
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value == "append" and isinstance(node.func.value, cst.Name) \
                    and node.func.value.value == key and len(node.args) == 1:
                value = node.args[0].value
            if value is not None:
                found = self._value(value, hops, seen)
                if found is not None:
                    return f"an aggregate of `{key}`, a list filled with record counts"
        return None

    def _name(self, node: cst.Name, hops: int, seen: frozenset) -> str | None:
        if hops <= 0:
            return None
        binding = self.fa.binding(node)
        if binding is None or id(binding.target) in seen:
            return None
        seen = seen | {id(binding.target)}
        if binding.kind == "unpack":
            return self._unpacked(node, binding, hops, seen)
        if binding.kind == "param" and isinstance(binding.target, cst.Param) and binding.target.default is not None \
                and isinstance(binding.target.default, cst.Name) and binding.target.default.value == node.value:
            # ``def account(steps, N=N)``: the parameter defaults to the module's own count of the same name
            index = self.fa.index
            fn = binding.scope
            outer = [b for b in index.lookup(node.value, index.scope_of(fn)) if b.scope is not fn
                     and b.kind == "assign" and b.value is not None
                     and index.order.get(b.target, 0) < index.order.get(fn, 0)]
            if not outer or id(outer[-1].target) in seen:
                return None
            return self._value(outer[-1].value, hops - 1, seen | {id(outer[-1].target)})
        if binding.kind == "param" and isinstance(binding.scope, cst.FunctionDef):
            return self._passed_count(node.value, binding.scope, hops - 1, seen)
        if binding.kind != "assign" or binding.value is None:
            return None
        return self._value(binding.value, hops - 1, seen)

    def _passed_count(self, param: str, fn: cst.FunctionDef, hops: int, seen: frozenset) -> str | None:
        """``def _add_noise_to_pi(nk, n, sigma)`` whose every call in the module passes a record count as
        ``n`` (``_add_noise_to_pi(nk, n_samples, sigma)`` with ``n_samples, d = X.shape``)."""
        if hops <= 0 or id(fn) in seen:
            return None
        from dpcheck.analysis.syntax import call_params
        seen = seen | {id(fn)}
        found: str | None = None
        calls = 0
        for call in self.fa.index.nodes(cst.Call):
            if call_name(call) != fn.name.value or self.fa.callee(call) is not fn:  # type: ignore[arg-type]
                continue
            calls += 1
            params = call_params(call, fn)  # type: ignore[arg-type]
            arg = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param), None)
            if arg is None and param in params:
                position = params.index(param)
                positional = [a for a in call.args if a.keyword is None]
                if any(a.star for a in positional[:position + 1]):
                    return None
                arg = positional[position].value if position < len(positional) else None
            if arg is None:
                return None
            counted = self._value(arg, hops, seen)  # type: ignore[arg-type]
            if counted is None:
                return None
            found = found or counted
        if not calls or found is None:
            return None
        return f"the parameter `{param}` of `{fn.name.value}`, passed {found} at every call"

    def _unpacked(self, node: cst.Name, binding, hops: int, seen: frozenset) -> str | None:  # type: ignore[no-untyped-def]
        stmt = binding.stmt
        if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1 \
                or not isinstance(stmt.targets[0].target, (cst.Tuple, cst.List)):
            return None
        slots = [e.value for e in stmt.targets[0].target.elements]
        index = next((i for i, e in enumerate(slots) if e is binding.target), None)
        if index is None:
            return None
        value = stmt.value
        # ``n, d = X_train.shape``
        if isinstance(value, cst.Attribute) and value.attr.value == "shape":
            return "the row count of `{}`".format(self.fa.code(value.value).strip()) \
                if index == 0 and _private_target(value.value) else None
        if not isinstance(value, cst.Call):
            return None
        return self._helper_slot(value, index, slots, hops, seen, node)

    def _helper_slot(self, call: cst.Call, index: int, slots, hops: int, seen: frozenset,  # type: ignore[no-untyped-def]
                     node: cst.Name | None = None) -> str | None:
        fa = self.fa
        callee = fa.callee(call)
        if callee is not None:
            for ret in fa.returns_of(callee):
                if not isinstance(ret.value, (cst.Tuple, cst.List)):
                    continue
                elements = ret.value.elements
                if slots is not None and len(elements) != len(slots):
                    continue
                if not -len(elements) <= index < len(elements):
                    continue
                found = self._value(elements[index].value, hops - 1, seen)
                if found is not None:
                    return f"returned by `{callee.name.value}` ({found})"
            return None
        # a loader defined in another module: the slot is named as a record count and the same
        # call hands back the training data
        if slots is None or node is None or node.value not in _COUNT_SLOT:
            return None
        from dpcheck.analysis.vocabulary import is_dataset_name
        if call_name(call) in _WRAPPERS or not any(
                isinstance(s, cst.Name) and is_dataset_name(s.value) and "train" in words(s.value) for s in slots):
            return None
        return f"unpacked beside the training data from `{call_name(call)}(...)`"

    def _object_count(self, attr: cst.Attribute, hops: int, seen: frozenset) -> str | None:
        """``full_data.n`` with ``full_data = GeneralData(...)``: a count attribute of a data object."""
        if attr.attr.value not in _COUNT_SLOT or not isinstance(attr.value, cst.Name):
            return None
        owner = attr.value
        pieces = words(owner.value)
        if pieces & (CONFIG | HELD_OUT) or not pieces & {"data", "dataset", "train", "training"}:
            return None
        binding = self.fa.binding(owner)
        if binding is None or binding.kind != "assign" or not isinstance(binding.value, cst.Call):
            return None
        return f"the record count held by the data object `{owner.value}`"
