"""DP402: integer columns restored by truncating continuous generator output."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.codetext import code_only
from dpcheck.rule import Rule

from ._dp34_util import (
    GEN_TEXT,
    ModuleIndex,
    assignments_in,
    call_name,
    contains_generator_call,
    gen_text,
    dotted,
    index_for,
    is_gen_identifier,
    number,
    refs,
    taint,
    tokens,
    value_refs,
    walk,
)

_TRUNC_TEXT = re.compile(r"astype|\bint\(|floor|trunc|\bfix\(|\.long\(|\.int\(|cast\(|int(?:8|16|32|64)|torch\.long")
def gate_text(src: str) -> bool:
    """The rule's own precondition, on the raw source (``gate`` refines it for the prefilter)."""
    return bool(_TRUNC_TEXT.search(src) and (GEN_TEXT.search(src) or _DECODE_TEXT.search(src)))


_DECODE_TEXT = re.compile(r"def \w*(?:decod|inverse|postprocess|denormal|untransform|restore|recover)", re.I)
_INT_DTYPE = re.compile(r"^(u?int(8|16|32|64)?|Int(8|16|32|64)|u?int_|intc|intp|long|i[1248]|<i[48]|(Long|Int)Tensor)$")
_TRUNC_FUNCS = {"floor", "trunc", "fix"}
_TRUNC_LIBS = ("numpy", "math", "torch", "tensorflow", "jax", "np", "tf")
_ROUNDERS = {"rint", "round", "around", "round_", "nearbyint"}
_INT_VALUED = {
    "argmax", "argmin", "argsort", "searchsorted", "digitize", "len", "count_nonzero", "bincount",
    "nonzero", "randint", "integers", "ceil", "multinomial", "choice", "categorical", "idxmax", "codes",
    "shape", "size", "ndim", "numel", "prod", "count", "index",
}
_WRAPPERS = {
    "values", "to_numpy", "numpy", "cpu", "detach", "squeeze", "flatten", "ravel", "reshape", "copy",
    "clone", "clip", "clamp", "minimum", "maximum", "abs", "asarray", "array", "tensor", "data", "view",
    "astype", "nan_to_num", "float", "double", "item", "tolist",
}
# functions that map model output back to table values (generation functions are covered by
# following the generator output itself)
_DECODE_FUNCS = {"decode", "decoding", "inverse", "postprocess", "denormalize", "untransform", "restore", "recover"}
_INT_MARKERS = {"int", "ints", "integer", "integers", "discrete", "ordinal", "count", "counts"}


def _int_dtype(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        return bool(_INT_DTYPE.match(expr.evaluated_value if isinstance(expr.evaluated_value, str) else ""))
    name = dotted(expr)
    return name is not None and bool(_INT_DTYPE.match(name.split(".")[-1]))


def truncation_operand(call: cst.Call, index: ModuleIndex) -> cst.BaseExpression | None:
    """The value a call truncates to an integer, or None when the call is not a truncation."""
    name = call_name(call)
    func = call.func
    receiver = func.value if isinstance(func, cst.Attribute) else None
    args = [a for a in call.args if a.keyword is None]
    kwargs = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if name == "astype" and receiver is not None:
        dtype = args[0].value if args else kwargs.get("dtype")
        return receiver if dtype is not None and _int_dtype(dtype) else None
    if name in {"to", "type"} and receiver is not None and args and _int_dtype(args[0].value):
        return receiver
    if name in {"long", "int"} and receiver is not None and not call.args:
        return receiver
    if name == "cast" and len(args) >= 2 and _int_dtype(args[1].value):
        return args[0].value
    if name == "int" and isinstance(func, cst.Name) and len(args) == 1:
        return args[0].value
    if isinstance(func, cst.Attribute) and len(args) == 1 and _INT_DTYPE.match(name) and name != "int":
        # numpy scalar constructors truncate too: ``np.int64(x)``
        if (index.qualify(func) or "").split(".")[0] in {"numpy", "torch"}:
            return args[0].value
    if name in _TRUNC_FUNCS:
        if receiver is not None and not call.args:
            qual = index.qualify(receiver) or ""
            if qual.split(".")[0] not in _TRUNC_LIBS:
                return receiver
            return None
        qual = index.qualify(func) or ""
        if args and (qual.split(".")[0] in _TRUNC_LIBS or isinstance(func, cst.Name) and qual != name):
            return args[0].value
    return None


class IntegerTruncation(Rule):
    id = "DP402"
    name = "integer-truncation"
    category = "processing"
    severity = "warning"
    summary = "integer columns restored by truncating continuous generator output (astype(int), int(), floor)"
    rationale = (
        "A generator outputs continuous values; integer columns must be restored by rounding to "
        "the nearest integer. Truncation — `.astype(int)`, `int(x)`, `np.floor`, `torch.floor`, "
        "`.long()` — maps 2.99 to 2, shifting every integer column down by half a unit on "
        "average and distorting its distribution (turing decodes INTEGER columns this way). "
        "Fix: round first, then cast: `np.rint(x).astype(int)`, `int(round(x))`, "
        "`torch.round(x).long()`."
    )
    # generator output or a decoding function must be in sight
    TRIGGERS = (
        "gen", "Gen", "GEN", "G_", "G(", "netG", "fake", "Fake", "synth", "Synth", "decod", "inverse",
        "post", "sample", "restore", "recover", "reverse", "denormal", "untransform",
    )

    VALID = (
        # rounding then cast
        """
import numpy as np
def decode(self, synthetic):
    for j, kind in enumerate(self.kinds):
        if kind == "INTEGER":
            synthetic[:, j] = np.rint(synthetic[:, j]).astype(int)
    return synthetic
""",
        # round via method, then torch long, generator output
        """
import torch
def sample(self, n):
    fake = self.generator(torch.randn(n, self.z))
    return fake.round().long()
""",
        # thresholding and argmax are already integral
        """
import numpy as np
def sample(self, n):
    out = self.G(np.random.randn(n, 8))
    binary = (out[:, 0] > 0.5).astype(int)
    cat = np.argmax(out[:, 1:4], axis=1).astype(np.int64)
    return binary, cat
""",
        # truncation of something that is not generator output, outside decoding
        """
import numpy as np
def batches(n, batch_size):
    steps = int(np.floor(n / batch_size))
    idx = (np.random.rand(n) * n).astype(int)
    return steps, idx
""",
        # int(x + 0.5) rounding idiom and clipping around a rounded value
        """
import numpy as np
def postprocess(values, lo, hi):
    if values.dtype.kind == "f":
        ints = np.clip(np.round(values), lo, hi).astype("int64")
        first = int(values[0] + 0.5)
        return ints, first
""",
    )

    INVALID = (
        # turing shape: INTEGER columns truncated with astype(int) in the decoder
        """
def _decode(self, data):
    out = data.copy()
    for i, col in enumerate(self.columns):
        if col.type == "INTEGER":
            out[:, i] = out[:, i].astype(int)  # <-
    return out
""",
        # generator output cast with numpy int dtype
        """
import numpy as np
def sample(self, n):
    z = np.random.uniform(0, 1, (n, self.z_dim))
    synth = self.sess.run(self.G_sample, feed_dict={self.Z: z})
    synth[:, self.int_cols] = synth[:, self.int_cols].astype(np.int64)  # <-
    return synth
""",
        # floor in any library spelling
        """
import math
import torch
from numpy import floor
def postprocess(fake, integer_idx):
    fake[:, integer_idx] = floor(fake[:, integer_idx])  # <-
    first = math.floor(fake[0, 0])  # <-
    return fake, first
def sample(G, z):
    return torch.floor(G(z))  # <-
""",
        # torch .long() and int() of generated values
        """
import torch
class Model:
    def generate(self, n):
        gen = self.generator(torch.rand(n, self.dim))
        counts = gen[:, 0].long()  # <-
        age = int(gen[0, 1])  # <-
        return counts, age
""",
        # pandas frame of synthetic data, dtype string, integer column loop
        """
import pandas as pd
def inverse_transform(self, synthetic):
    df = pd.DataFrame(synthetic, columns=self.names)
    for col in self.integer_columns:
        df[col] = df[col].astype("int32")  # <-
    return df
""",
        # numpy scalar constructor
        """
import numpy as np
def sample_rows(self, n):
    rows = self.generator.predict(self.noise(n))
    return [np.int64(r[0]) for r in rows]  # <-
""",
        # trunc and tf.cast
        """
import numpy as np
import tensorflow as tf
def restore(generated, kinds):
    out = np.trunc(generated)  # <-
    as_tf = tf.cast(generated, tf.int32)  # <-
    return out, as_tf
""",
    )

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """The trigger substrings, then a textual check the finding cannot exist without."""
        return super().applies_to(source) and cls.gate(source)

    @staticmethod
    def gate(src: str) -> bool:
        """A truncating call (dtype names may be strings: raw source) on generator output or
        inside a decoding function, the generator or the ``def`` being in code."""
        if not _TRUNC_TEXT.search(src):
            return False
        code = code_only(src)
        return bool(_DECODE_TEXT.search(code) or gen_text(src, code))

    def visit_Module(self, node: cst.Module) -> None:
        if not gate_text(self.ctx.source):
            return
        index = index_for(self.ctx)
        taints: dict[cst.CSTNode | None, set[str]] = {}
        for call in index.calls:
            operand = truncation_operand(call, index)
            if operand is None:
                continue
            # ``np.floor(x).astype(int)``: the inner truncation is the one reported
            if isinstance(operand, cst.Call) and truncation_operand(operand, index) is not None:
                continue
            func = index.enclosing_function(call)
            if func not in taints:
                taints[func] = self._gen_taint(func, index) if func is not None else set()
            if self._integral(operand, func, index):
                continue
            if not (self._is_generated(operand, taints[func]) or self._decoding_int_column(call, func, index)):
                continue
            self.report(
                call,
                "integer column restored by truncating continuous generator output "
                f"(`{_short(index.module.code_for_node(call))}`): values are cut toward zero (2.9 → 2), biasing "
                "the column by about −0.5; round first, e.g. np.rint(x).astype(int)",
            )

    @staticmethod
    def _gen_taint(func: cst.FunctionDef, index: ModuleIndex) -> set[str]:
        assigns = assignments_in(func, index)
        seed = {p.name.value for p in func.params.params if is_gen_identifier(p.name.value)}
        return taint(assigns, contains_generator_call, seed)

    @staticmethod
    def _is_generated(operand: cst.BaseExpression, tainted: set[str]) -> bool:
        if contains_generator_call(operand):
            return True
        read = value_refs(operand)
        return bool(read & tainted) or any(is_gen_identifier(r) for r in read if r != "self")

    def _integral(self, operand: cst.BaseExpression, func: cst.FunctionDef | None, index: ModuleIndex, depth: int = 2) -> bool:
        core = _unwrap(operand, index)
        if isinstance(core, (cst.Comparison, cst.BooleanOperation)):
            return True
        if isinstance(core, cst.UnaryOperation) and isinstance(core.operator, cst.Not):
            return True
        if isinstance(core, cst.BinaryOperation):
            if isinstance(core.operator, (cst.Add, cst.Subtract)) and (number(core.right) == 0.5 or number(core.left) == 0.5):
                return True
            if isinstance(core.operator, (cst.BitAnd, cst.BitOr, cst.BitXor, cst.FloorDivide, cst.Modulo)):
                return True
        if isinstance(core, cst.Call):
            name = call_name(core)
            if name in _ROUNDERS or name in _INT_VALUED:
                return True
            if name in {"int", "long"} or truncation_operand(core, index) is not None:
                return True
        if isinstance(core, cst.Integer):
            return True
        if isinstance(core, cst.Attribute) and core.attr.value in {"shape", "size", "ndim", "itemsize", "nbytes", "n_features_in_"}:
            return True
        if depth > 0 and func is not None and isinstance(core, (cst.Name, cst.Attribute, cst.Subscript)):
            key = dotted(core.value if isinstance(core, cst.Subscript) else core)
            values = [
                n.value for n in index.simple_assigns(func)
                if any(dotted(t.target) == key for t in n.targets)
            ]
            if values and all(self._integral(v, func, index, depth - 1) for v in values):
                return True
        return False

    @staticmethod
    def _decoding_int_column(call: cst.Call, func: cst.FunctionDef | None, index: ModuleIndex) -> bool:
        if func is None or not tokens(func.name.value) & _DECODE_FUNCS:
            return False
        child: cst.CSTNode = call
        for anc in index.ancestors(call):
            if anc is func:
                break
            context: cst.CSTNode | None = None
            # the branch/loop must guard the truncation, not contain it in its test
            if isinstance(anc, cst.If) and child is not anc.test and not _type_check(anc.test):
                context = anc.test
            elif isinstance(anc, cst.For) and child is anc.body:
                context = anc.iter
            child = anc
            if context is None:
                continue
            for n in walk(context):
                if isinstance(n, cst.SimpleString) and re.search(r"int|discrete|ordinal", n.value, re.I):
                    return True
            if any(tokens(r) & _INT_MARKERS for r in refs(context)):
                return True
        return False


def _type_check(test: cst.BaseExpression) -> bool:
    """``isinstance(x, int)`` asks what a value is; it does not select integer columns."""
    return any(isinstance(n, cst.Call) and call_name(n) in {"isinstance", "issubclass"} for n in walk(test))


def _unwrap(expr: cst.BaseExpression, index: ModuleIndex) -> cst.BaseExpression:
    """Strip conversions, views and clipping: ``np.clip(np.round(x), 0, 9).values`` -> ``np.round(x)``."""
    cur = expr
    while True:
        if isinstance(cur, cst.Call) and call_name(cur) in _WRAPPERS:
            func = cur.func
            is_method = isinstance(func, cst.Attribute) and (dotted(func.value) or ".").split(".")[0] not in index.imports
            if is_method:
                cur = func.value
                continue
            if cur.args:
                cur = cur.args[0].value
                continue
            return cur
        if isinstance(cur, cst.Attribute) and cur.attr.value in {"values", "data", "T"}:
            cur = cur.value
            continue
        if isinstance(cur, cst.Subscript):
            cur = cur.value
            continue
        return cur


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:37] + "..."
