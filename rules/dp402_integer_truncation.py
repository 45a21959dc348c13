"""DP402: integer columns restored by truncating continuous generator output."""
from __future__ import annotations

import ast

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, read_names
from dpcheck.analysis.astfacts import call_name as ast_call_name

from dpcheck.analysis.syntax import call_name, dotted, number, refs, walk
from dpcheck.codetext import code_only
from dpcheck.cstwalk import children as walk_children
from dpcheck.rule import Rule
from dpcheck.analysis.generator import (
    GEN_TEXT,
    ModuleIndex,
    assignments_in,
    contains_generator_call,
    WEAK_GEN_LITERALS,
    gan_context,
    gen_text,
    has_any,
    params_gen,
    strong_gen_raw,
    index_for,
    ast_gen_taint,
    ast_generated,
    is_gen_identifier,
    is_generator_call,
    taint,
    tokens,
)

_TRUNC_TEXT = re.compile(r"astype|\bint\(|floor|trunc|\bfix\(|\.long\(|\.int\(|cast\(|int(?:8|16|32|64)|torch\.long")
def gate_text(src: str) -> bool:
    """The rule's own precondition, on the raw source (``gate`` refines it for the prefilter)."""
    return bool(_TRUNC_TEXT.search(src) and (GEN_TEXT.search(src) or _DECODE_TEXT.search(src)))


#: a substring of every match of ``_TRUNC_TEXT`` (``gate_text``)
_TRUNC_LITERALS = (
    "astype", "int(", "floor", "trunc", "fix(", ".long(", ".int(", "cast(", "int8", "int16", "int32", "int64",
    "torch.long",
)
_INT_NAME = r"(?<![\w])(?:u?int(?:8|16|32|64)?|Int(?:8|16|32|64)|u?int_|intc|intp|long|i[1248]|(?:Long|Int)Tensor)(?!\w)"
#: a string literal that ``_INT_DTYPE`` accepts, in the raw source
_INT_STRING = re.compile(
    r"[\"'](?:u?int(?:8|16|32|64)?|Int(?:8|16|32|64)|u?int_|intc|intp|long|i[1248]|<i[48]|(?:Long|Int)Tensor)[\"']"
)
_WS = r"[\s\\]*"
#: truncating calls whose integer dtype is a name (or any call without a dtype)
_TRUNC_CODE = re.compile(
    rf"(?:astype|\bto|\btype){_WS}\([^()]*?{_INT_NAME}"
    rf"|\.{_WS}(?:long|int){_WS}\({_WS}\)"
    rf"|\bcast{_WS}\("
    rf"|(?<![\w.])int{_WS}\("
    rf"|\.{_WS}(?!int\b){_INT_NAME}{_WS}\("
    rf"|\b(?:floor|trunc|fix){_WS}\("
)
#: fast scan for the call names ``_TRUNC_CODE`` can match
_TRUNC_CANDIDATE = re.compile(
    r"(?:astype|to|type|long|int|floor|trunc|fix|cast|i[1248]|Tensor|int_|intc|intp|int8|int16|int32|int64"
    r"|Int8|Int16|Int32|Int64)[\s\\]*\("
)
#: ``.astype/.to/.type`` whose dtype argument is a string (``''`` in code only)
_TRUNC_STR_CODE = re.compile(rf"(?:astype|\bto|\btype){_WS}\([^()]*?''")


_DECODE_LITERALS = ("decod", "inverse", "postprocess", "denormal", "untransform", "restore", "recover")
_DECODE_DEF = re.compile(r"def[\s\\]+(\w+)")
_METHOD_FORM = re.compile(r"\.[\s\\]*(?:astype|to|type|long|int|floor|trunc|fix)[\s\\]*\($")


def _truncation_operands(src: str, code: str) -> list[tuple[int, int]]:
    """Spans of ``code`` that hold the truncated value of each candidate truncation: the
    receiver of a method form (``x[:, i].astype(int)``), else the arguments."""
    out = []
    for cand in _TRUNC_CANDIDATE.finditer(code):
        # every match of ``_TRUNC_CODE`` ends with one of these names and ``(``: try it from
        # the candidate, from the start of its identifier and from a dot before that
        start = cand.start()
        while start > 0 and (code[start - 1].isalnum() or code[start - 1] == "_"):
            start -= 1
        dot = start
        while dot > 0 and code[dot - 1] in " \t\n\\":
            dot -= 1
        for pos in {cand.start(), start, dot - 1 if dot > 0 else start}:
            m = _TRUNC_CODE.match(code, pos)
            if m is not None:
                out.append(_operand_span(code, m))
                break
    if _INT_STRING.search(src):
        out.extend(_operand_span(code, m) for m in _TRUNC_STR_CODE.finditer(code))
    return out


def _operand_span(code: str, m: re.Match[str]) -> tuple[int, int]:
    text = m.group()
    open_at = m.start() + text.index("(")
    head = code[m.start():open_at + 1]
    if _METHOD_FORM.search(head) or head.lstrip(".").startswith(("astype", "to", "type")):
        # the receiver: a primary expression ending right before the dot
        i = code.rindex(".", 0, open_at)
        while i > 0:
            j = i - 1
            while j >= 0 and code[j] in " \t\\\n":
                j -= 1
            if j < 0:
                break
            ch = code[j]
            if ch in ")]}":
                depth = 0
                while j >= 0:
                    if code[j] in ")]}":
                        depth += 1
                    elif code[j] in "([{":
                        depth -= 1
                        if depth == 0:
                            break
                    j -= 1
                i = max(j, 0)
            elif ch.isalnum() or ch in "_.'":
                while j >= 0 and (code[j].isalnum() or code[j] in "_.'"):
                    j -= 1
                i = j + 1
            else:
                break
        return i, open_at
    # a function form: its arguments
    depth, k = 1, open_at + 1
    while k < len(code) and depth:
        if code[k] in "([{":
            depth += 1
        elif code[k] in ")]}":
            depth -= 1
        k += 1
    return open_at, k


_DECODE_TEXT = re.compile(r"def \w*(?:decod|inverse|postprocess|denormal|untransform|restore|recover)", re.I)
_INT_DTYPE = re.compile(r"^(u?int(8|16|32|64)?|Int(8|16|32|64)|u?int_|intc|intp|long|i[1248]|<i[48]|(Long|Int)Tensor)$")
#: the other call names ``truncation_operand`` accepts
_TRUNC_NAMES = frozenset({"astype", "to", "type", "long", "int", "cast"})
_TRUNC_FUNCS = {"floor", "trunc", "fix"}
_TRUNC_LIBS = ("numpy", "math", "torch", "tensorflow", "jax", "np", "tf")
#: a module that samples a discrete graphical model (mbi / Private-PGM)
_PGM_TEXT = re.compile(r"\b(?:from|import)\s+(?:mbi|private_pgm|src\.mbi)\b|\bFactoredInference\b|\bmirror_descent\b")
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
    requires_dp_context = True
    summary = "integer columns restored by truncating continuous generator output (astype(int), int(), floor)"
    rationale = (
        "A generator outputs continuous values; integer columns must be restored by rounding to "
        "the nearest integer. Truncation — `.astype(int)`, `int(x)`, `np.floor`, `torch.floor`, "
        "`.long()` — maps 2.99 to 2, shifting every integer column down by half a unit on "
        "average and distorting its distribution (turing decodes INTEGER columns this way). "
        "Fix: round first, then cast: `np.rint(x).astype(int)`, `int(round(x))`, "
        "`torch.round(x).long()`. Only truncations on the way out count — in a sampling, "
        "generation or decoding entry point, of generated values themselves (not their sizes, "
        "sums or counts, parsed strings — the digit characters of `format(k, '08b')` — or ε bookkeeping) — and only in code with a DP context."
    )
    # generator output or a decoding function must be in sight
    TEXT_AFTER_GATE = True
    TRIGGERS = (
        "gen", "Gen", "GEN", "G_", "G(", "netG", "fake", "Fake", "synth", "Synth", "decod", "inverse",
        "post", "sample", "restore", "recover", "reverse", "denormal", "untransform",
    )

    VALID = (
        # (fp47) a Private-PGM model's sample is integer category codes of its discrete domain: the cast is exact
        """
import numpy as np
from mbi import Domain, estimation
def fit_and_sample(data, marginals, sigma, n):
    model = estimation.mirror_descent(data.domain, measure(data, marginals, sigma))
    synth = model.synthetic_data(n)
    table = synth.df
    feats = np.stack([table[c].astype(int).values for c in table.columns[:-1]], axis=1)
    labels = table["label"].astype(int).values
    return feats, labels
""",
        # ordinary ML: class predictions cast for a confusion matrix
        """
import numpy as np
def confusion(model, x, y):
    pred = model.predict(x).astype(int)
    return np.bincount(y * 2 + pred, minlength=4)
""",
        # the sampled cell index written out in binary: each digit character is parsed exactly
        """
import numpy as np
def _make_synthetic(self, synthetic_hist, n, epsilon=1.0):
    synthetic_hist = synthetic_hist / synthetic_hist.sum()
    cells = self.rng.choice(a=np.arange(len(synthetic_hist)), size=n, p=synthetic_hist)
    rows = np.zeros((n, self.width))
    for i in range(n):
        bits = format(cells[i], f"0{self.width}b")
        rows[i] = [int(b) for b in bits]
    return rows
""",
        # a nested template's variables are not the outer function's: the outer ``v`` is public
        # configuration (dp-wizard's code generator), the nested one iterates a synthetic table
        """
import opendp.prelude as dp
class Generator:
    def _make_synth_query(self, epsilon):
        def template(synth_context):
            synth_query = synth_context.query().contingency_table()
            table = synth_query.release()
            sizes = [len(v) for v in table.keys.values()]
            return table.synthesize(), sizes
        cuts = {k: sorted({int(x) for x in make_cut_points(int(v[0].lower_bound), int(v[0].upper_bound))})
                for (k, v) in self.plan.columns.items()}
        return template, cuts
""",
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
        # counts, slice sizes, sums of 0/1 labels, privacy bookkeeping and parsed text are not columns
        """
import numpy as np
class DPSynthesizer:
    def sample(self, n, epsilon):
        fake = self.generator(np.random.randn(n, self.dim))
        n_pos = int(np.sum(fake[:, -1] > 0.5))
        keep = fake[: int(len(fake) * 0.9)]
        total = int(fake[:, 0].sum())
        spent = int(epsilon * 100)
        rows = int(self.spec["rows"].split(",")[0])
        return keep, n_pos, total, spent, rows
""",
        # a GAN that claims no privacy: truncation is a utility bug there, not a privacy bug
        """
import torch
class TabularGAN:
    def sample(self, n):
        fake = self.generator(torch.randn(n, self.nz))
        return fake[:, 0].long()
""",
        # a sampler that returns integer codes as strings: int() parses them
        """
def sample(self, n):
    result = self.synth.sample(n)
    codes = [[int(v) if v != "" else None for v in row] for row in result[1:]]
    return self.encoder.decode(codes)
""",
        # truncation inside training (labels for the teachers), not on the way out
        """
import numpy as np
def train_step(self, x, epsilon):
    fake = self.generator(self.noise(len(x)))
    votes = self.teacher_votes(fake).astype(int)
    buckets = np.floor(fake[:, 0] * 10)
    self.update(votes, buckets)
""",
        # privbayes-enhanced synthesizer.py: stochastic rounding (floor plus a Bernoulli of the fraction, or
        # floor(x + U)) is unbiased, and the final cast applies to values every branch already rounded
        """
import numpy as np
def decode(self, synthetic, rng, n):
    for c in self.int_columns:
        val = synthetic[c]
        mode = self.integer_decode_mode
        if mode == "stochastic":
            base = np.floor(val)
            frac = val - base
            draw = rng.random(n)
            val = base + (draw < frac).astype(float)
        elif mode == "granular":
            g = int(self.granularity.get(c, 1))
            g = max(1, g)
            val = np.round(val / g) * g
        else:
            val = np.rint(val)
        if self.dtype is not None:
            val = np.clip(val, 0, 100)
            val = val.astype(self.dtype)
        else:
            val = val.astype(int)
        synthetic[c] = np.floor(synthetic[c] + np.random.uniform(size=n))
    return synthetic
""",
        # a private marginal synthesizer's codes: cast to look categories up, clamped into a domain of k codes,
        # or mapped element-wise to 0/1 — no continuous value is cut
        """
import numpy as np
def sample_synthetic(self, n, epsilon):
    synth_df = self.generator.sample(n)
    out = {}
    for col in self.columns:
        out[col] = synth_df[col].astype(int).map(self.labels[col])
        names = self.names[col][synth_df[col].astype(int)]
        synth_df[col] = synth_df[col].clip(0, self.domain[col] - 1).astype(int)
        synth_df[col] = np.clip(synth_df[col], 0, len(self.names[col]) - 1).astype(int)
    synth_df["y"] = synth_df["y"].apply(lambda x: 1 if x == 1 else 0).astype(int)
    return out, names, synth_df
""",
    )

    INVALID = (
        # (fp47) twin: a GAN's sample (continuous generator output) next to the same Private-PGM import
        """
import numpy as np
from mbi import Domain
def fit_and_sample(gan, n):
    synth = gan.generator.sample(n)
    table = synth.df
    feats = np.stack([table[c].astype(int).values for c in table.columns[:-1]], axis=1)  # <-
    return feats
""",
        # twin: the elements iterated are generated floats, not the characters of a string
        """
import numpy as np
def _make_synthetic(self, n, epsilon=1.0):
    fake = self.generator(np.random.normal(size=(n, self.width)))
    rows = np.zeros((n, self.width))
    for i in range(n):
        rows[i] = [int(b) for b in fake[i]]  # <-
    return rows
""",
        # turing shape: INTEGER columns truncated with astype(int) in the decoder
        """
\"\"\"Decoder of a differentially private synthesizer.\"\"\"
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
def sample(self, n, epsilon=1.0):
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
def postprocess(fake, integer_idx, noise_multiplier):
    fake[:, integer_idx] = floor(fake[:, integer_idx])  # <-
    first = math.floor(fake[0, 0])  # <-
    return fake, first
def sample(G, z, epsilon):
    return torch.floor(G(z))  # <-
""",
        # torch .long() and int() of generated values
        """
import torch
class DPModel:
    def generate(self, n):
        gen = self.generator(torch.rand(n, self.dim))
        counts = gen[:, 0].long()  # <-
        age = int(gen[0, 1])  # <-
        return counts, age
""",
        # pandas frame of synthetic data, dtype string, integer column loop
        """
import pandas as pd
def inverse_transform(self, synthetic, privacy_budget):
    df = pd.DataFrame(synthetic, columns=self.names)
    for col in self.integer_columns:
        df[col] = df[col].astype("int32")  # <-
    return df
""",
        # numpy scalar constructor
        """
import numpy as np
def sample_rows(self, n):
    \"\"\"Rows of the (ε, δ)-DP generator.\"\"\"
    rows = self.generator.predict(self.noise(n))
    return [np.int64(r[0]) for r in rows]  # <-
""",
        # trunc and tf.cast
        """
import numpy as np
import tensorflow as tf
def restore(generated, kinds, target_epsilon):
    out = np.trunc(generated)  # <-
    as_tf = tf.cast(generated, tf.int32)  # <-
    return out, as_tf
""",
        # torch dtype conversion and trunc in a synthesis method
        """
import torch
class PrivateGAN:
    def synthesize(self, n, epsilon=None):
        rows = self.netG(torch.randn(n, self.nz))
        ages = rows[:, 0].to(torch.int64)  # <-
        kids = torch.trunc(rows[:, 1])  # <-
        return ages, kids
""",
        # the same spellings on continuous generator output: a cast not used as a key, a clamp to a value range
        # (not to 0..k-1), an element-wise map that keeps fractions
        """
import numpy as np
def sample_synthetic(self, n, epsilon):
    synth_df = self.generator.sample(n)
    for col in self.int_columns:
        synth_df[col] = synth_df[col].clip(0, self.upper[col]).astype(int)  # <-
        synth_df[col] = np.clip(synth_df[col], 1, self.domain[col] - 1).astype(int)  # <-
    synth_df["age"] = synth_df["age"].apply(lambda x: x * 100).astype(int)  # <-
    ages = synth_df["age"].astype(int) + 1  # <-
    return synth_df, ages
""",
    )

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """The trigger substrings, then a textual check the finding cannot exist without."""
        return super().applies_to(source) and cls.gate(source)

    @staticmethod
    def gate(src: str) -> bool:
        """Necessary conditions of a finding, cheapest first (raw source, then code only):

        * ``gate_text`` — ``visit_Module`` requires it on the raw source;
        * a call :func:`truncation_operand` accepts: ``.astype/.to/.type`` with an integer
          dtype (a name, or a string — then an integer dtype string is in the raw source),
          ``.long()``/``.int()``, ``cast(…)``, ``int(x)``, ``np.int64(x)``,
          ``floor/trunc/fix(…)`` — in code, not in docstrings or comments;
        * the truncated value generated (:meth:`_is_generated`: a generator call or a name
          that may name generator output, taints start from those) or the call inside a
          decoding function (:meth:`_decoding_int_column`: ``def decode…/inverse…``).
        """
        if not has_any(src, _TRUNC_LITERALS):
            return False
        lower = src.lower()
        decode = has_any(lower, _DECODE_LITERALS) and _DECODE_TEXT.search(src) is not None
        if not (decode or strong_gen_raw(src) or has_any(src, WEAK_GEN_LITERALS) and gan_context(src)):
            return False
        code = code_only(src)
        decode = decode and any(tokens(m.group(1)) & _DECODE_FUNCS for m in _DECODE_DEF.finditer(code))
        if not decode and not gen_text(src, code):
            return False
        operands = _truncation_operands(src, code)
        if not operands:
            return False
        if decode:
            return True
        if any(gen_text(src, code[a:b]) for a, b in operands):
            return True
        return gen_text(src, code, called=True) or params_gen(src, code)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a call ``truncation_operand`` may accept (by its name) on an output path
        (inside a function, at any depth, named for sampling or decoding: ``_output_path``) that
        either sits directly in a decoding function or may truncate generated values: a name
        or call of the generator in it, or a name its function derives from one (``_gen_taint``)."""
        if not gate_text(facts.source):
            return False  # ``visit_Module`` needs it
        taints: dict[ast.AST, set[str]] = {}
        for func in facts.functions:
            if not tokens(func.name) & _OUTPUT_PATH:
                continue
            for node in ast.walk(func):
                if not isinstance(node, ast.Call):
                    continue
                name = ast_call_name(node)
                if not (name in _TRUNC_NAMES or name in _TRUNC_FUNCS or _INT_DTYPE.match(name)):
                    continue
                owner = facts.enclosing_function(node)
                if owner is not None and tokens(owner.name) & _DECODE_FUNCS \
                        and _ast_int_column_context(facts, node, owner):  # type: ignore[attr-defined]
                    return True
                if owner is not None and owner not in taints:
                    taints[owner] = ast_gen_taint(owner)
                if ast_generated(node, taints.get(owner, set())):  # type: ignore[arg-type]
                    return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        if not gate_text(self.ctx.source) or _evaluation_script(self.ctx.path):
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
            if not _output_path(func, index) or _bookkeeping(operand) or _text_value(operand, call, index):
                continue
            if func not in taints:
                taints[func] = self._gen_taint(func, index) if func is not None else set()
            if self._integral(operand, func, index) or self._stochastic_rounding(call, operand, func, index):
                continue
            if _lookup_key(call, index) or _index_clamp(operand):
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
        assigns = assignments_in(func, index, nested=False)
        seed = {p.name.value for p in func.params.params if is_gen_identifier(p.name.value)}
        return taint(assigns, contains_generator_call, seed)

    @staticmethod
    def _is_generated(operand: cst.BaseExpression, tainted: set[str]) -> bool:
        """Generated values themselves, not sizes or statistics of them (``len(fake) * r``,
        ``fake.shape[0]``, ``labels.sum()``)."""
        stack: list[cst.CSTNode] = [operand]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                if call_name(node) in _INT_VALUED or call_name(node) in _REDUCTIONS:
                    continue
                if contains_generator_call(node.func) or is_generator_call(node):
                    return True
            if isinstance(node, cst.Attribute) and node.attr.value in _SIZE_ATTRS:
                continue
            if isinstance(node, (cst.Name, cst.Attribute)):
                name = dotted(node)
                if name is not None:
                    if name in tainted or name.split(".")[0] in tainted or name != "self" and is_gen_identifier(name):
                        return True
                    if isinstance(node, cst.Attribute):
                        continue
            stack.extend(walk_children(node))
        return False

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
            # sums and products of integers (``base + (u < frac)``, ``np.round(x / g) * g`` with an integer ``g``)
            if isinstance(core.operator, (cst.Add, cst.Subtract, cst.Multiply)) \
                    and self._integral(core.left, func, index, depth) \
                    and self._integral(core.right, func, index, depth):
                return True
        if isinstance(core, cst.Call):
            name = call_name(core)
            if name in _ROUNDERS or name in _INT_VALUED:
                return True
            # ``col.apply(lambda x: 1 if x == 1 else 0)``: an element-wise map whose every result is integral
            if name in {"apply", "map", "applymap"} and core.args and isinstance(core.args[0].value, cst.Lambda) \
                    and _integral_results(core.args[0].value.body):
                return True
            if name in {"int", "long"} or truncation_operand(core, index) is not None:
                return True
            if name in {"max", "min"} and core.args and all(
                    self._integral(a.value, func, index, depth) for a in core.args):
                return True
        if isinstance(core, cst.Integer):
            return True
        if isinstance(core, cst.Attribute) and core.attr.value in {"shape", "size", "ndim", "itemsize", "nbytes", "n_features_in_"}:
            return True
        # (fp47) a sample of a discrete graphical model (mbi / Private-PGM ``model.synthetic_data(n)``, its
        # ``.df`` view): every column is already an integer category code of the model's domain
        if _PGM_TEXT.search(self.ctx.source):
            if isinstance(core, cst.Call) and call_name(core) == "synthetic_data" and isinstance(core.func, cst.Attribute):
                return True
            if isinstance(core, cst.Attribute) and core.attr.value in {"df", "values"} \
                    and self._integral(core.value, func, index, depth):
                return True
        if depth > 0 and func is not None and isinstance(core, (cst.Name, cst.Attribute, cst.Subscript)):
            key = dotted(core.value if isinstance(core, cst.Subscript) else core)
            values = _reaching(key, core, func, index)
            if not values:
                values = [
                    n.value for n in index.simple_assigns(func)
                    if any(dotted(t.target) == key for t in n.targets)
                ]
            # ``g = max(1, g)`` updates ``g`` in place: the other definitions decide
            def self_update(v: cst.BaseExpression) -> bool:
                return isinstance(v, cst.Call) and call_name(v) in {"max", "min"} and key in {dotted(a.value) for a in v.args}
            if values and all(self_update(v) for v in values):
                values = [n.value for n in index.simple_assigns(func) if any(dotted(t.target) == key for t in n.targets)]
            values = [v for v in values if not self_update(v)] or values
            if values and all(self._integral(v, func, index, depth - 1) for v in values):
                return True
        return False

    @staticmethod
    def _stochastic_rounding(call: cst.Call, operand: cst.BaseExpression, func: cst.FunctionDef | None,
                             index: ModuleIndex) -> bool:
        """Unbiased stochastic rounding, not truncation: ``floor(x + U)`` with a uniform draw ``U``, or
        ``base = floor(x)`` followed by ``base + (U < x - base)`` (a Bernoulli of the fractional part)."""
        if call_name(call) not in _TRUNC_FUNCS:
            return False
        core = _unwrap(operand, index)
        if isinstance(core, cst.BinaryOperation) and isinstance(core.operator, cst.Add) \
                and any(_uniform_draw(side) for side in (core.left, core.right)):
            return True
        statement = index.parents.get(call)
        if not (isinstance(statement, cst.Assign) and statement.value is call and len(statement.targets) == 1):
            return False
        base = dotted(statement.targets[0].target)
        if base is None or func is None:
            return False
        for node in walk(func):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
                for mine, other in ((node.left, node.right), (node.right, node.left)):
                    if dotted(mine) == base and isinstance(_unwrap(other, index), cst.Comparison):
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


#: generation and decoding entry points: where generated samples become table columns
_OUTPUT_PATH = {
    "sample", "samples", "generate", "generation", "synthesize", "synthesise", "synthetic", "synth",
} | _DECODE_FUNCS
#: reductions give a statistic or a count, not a column
_REDUCTIONS = {"sum", "nansum", "mean", "nanmean", "max", "min", "amax", "amin", "std", "var", "median", "norm", "any", "all"}
_SIZE_ATTRS = {"shape", "size", "ndim", "itemsize", "nbytes"}
#: privacy parameters and parsed text: rounded for bookkeeping, never a generated column
_BOOKKEEPING = {"epsilon", "eps", "delta", "budget", "rho", "sigma", "spent", "seed", "steps", "epochs", "iterations"}
_PARSERS = {"split", "strip", "group", "groups", "read", "readline", "input", "getenv", "get", "replace"}


def _evaluation_script(path: str) -> bool:
    """``titanic_test.py``, ``test_generator.py``, ``evaluate_utility.py``: a test or a utility evaluation reads
    the synthetic table (a cast there changes what is scored, not what is released)."""
    stem = re.sub(r"\W+", "_", path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]).lower()
    pieces = set(stem.split("_"))
    return bool(pieces & {"test", "tests", "eval", "evaluate", "evaluation"})


def _output_path(func: cst.FunctionDef | None, index: ModuleIndex) -> bool:
    """Is ``func`` (or a function enclosing it) a sampling or decoding entry point?"""
    while func is not None:
        if tokens(func.name.value) & _OUTPUT_PATH:
            return True
        func = index.enclosing_function(func)
    return False


def _bookkeeping(operand: cst.BaseExpression) -> bool:
    """``int(epsilon * 100)``, ``int(line.split(",")[1])``, ``int("42")``: not generated data."""
    if isinstance(operand, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    for node in walk(operand):
        if isinstance(node, cst.Call) and call_name(node) in _PARSERS | {"str"}:
            return True
        if isinstance(node, (cst.Name, cst.Attribute)):
            last = (dotted(node) or "").split(".")[-1]
            if tokens(last) & _BOOKKEEPING:
                return True
    return False


_TEXT_MAKERS = frozenset({"format", "str", "bin", "hex", "oct", "split", "strip", "zfill", "rjust", "ljust"})


def _text_made(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, (cst.SimpleString, cst.FormattedString)) or isinstance(expr, cst.Call) \
        and call_name(expr) in _TEXT_MAKERS


def _character_of_text(name: str, call: cst.Call, index: ModuleIndex) -> bool:
    """``[int(bit) for bit in format(k, '08b')]``, ``for ch in digits: int(ch)`` over a string built by
    ``format``/``str``/``bin``: each element is a digit character, parsed exactly, not a float truncated."""
    scope = index.enclosing_function(call) or index.module
    texts = {dotted(t.target) for a in walk(scope) if isinstance(a, cst.Assign) and _text_made(a.value)
             for t in a.targets}
    for node in walk(index.enclosing_statement(call)):
        loops = [node] if isinstance(node, cst.CompFor) else []
        for loop in loops:
            if dotted(loop.target) == name and (_text_made(loop.iter) or dotted(loop.iter) in texts):
                return True
    stmt = index.enclosing_statement(call)
    for loop in walk(scope):
        if isinstance(loop, cst.For) and dotted(loop.target) == name and any(s is stmt for s in walk(loop.body)) \
                and (_text_made(loop.iter) or dotted(loop.iter) in texts):
            return True
    return False


def _text_value(operand: cst.BaseExpression, call: cst.Call, index: ModuleIndex) -> bool:
    """``int(v) if v != '' else None``: a value compared with a string in the same statement is
    text being parsed (a sampler that returns integer codes as strings), not a float."""
    name = dotted(operand)
    if name is None:
        return False
    if _character_of_text(name, call, index):
        return True
    for node in walk(index.enclosing_statement(call)):
        if not isinstance(node, cst.Comparison):
            continue
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if any(dotted(x) == name for x in sides) and any(isinstance(x, cst.SimpleString) for x in sides):
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


def _ast_int_column_context(facts: AstFacts, call: ast.Call, func: ast.AST) -> bool:
    """``_decoding_int_column`` widened (type checks count as guards too)."""
    child: ast.AST = call
    parent = facts.parents.get(call)
    while parent is not None and parent is not func:
        context: ast.AST | None = None
        if isinstance(parent, ast.If) and child is not parent.test:
            context = parent.test
        elif isinstance(parent, (ast.For, ast.AsyncFor)) and any(child is s for s in parent.body):
            context = parent.iter
        if context is not None:
            for n in ast.walk(context):
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and _INT_WORD.search(n.value):
                    return True
            if any(tokens(r) & _INT_MARKERS for r in read_names(context)):
                return True
        child, parent = parent, facts.parents.get(parent)
    return False


_INT_WORD = re.compile(r"int|discrete|ordinal", re.I)


_UNIFORM_DRAWS = {"rand", "random", "uniform", "random_sample", "rand_like", "uniform_"}


def _uniform_draw(expr: cst.BaseExpression) -> bool:
    return any(isinstance(n, cst.Call) and call_name(n) in _UNIFORM_DRAWS for n in walk(expr))


def _reaching(key: str | None, node: cst.CSTNode, func: cst.FunctionDef, index: ModuleIndex) -> list[cst.BaseExpression]:
    """The values of ``key`` that reach ``node``: the nearest earlier assignment in the enclosing blocks, or the last
    assignment in every branch of an earlier ``if``/``elif``/``else`` that assigns it in all branches. Empty when
    not decided this way."""
    if key is None:
        return []
    found: list[cst.BaseExpression] = []
    child: cst.CSTNode = node
    for anc in index.ancestors(node):
        for body in _suites(anc):
            if child in body:
                for stmt in reversed(body[:body.index(child)]):
                    values, complete = _assigned_in(key, stmt)
                    found += values
                    if complete:
                        return found
        if anc is func:
            break
        child = anc
    return []


def _assigned_in(key: str, stmt: cst.CSTNode) -> tuple[list[cst.BaseExpression], bool]:
    """Last values ``stmt`` gives ``key``, and whether every path through it assigns."""
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in reversed(stmt.body):
            if isinstance(small, cst.Assign) and any(dotted(t.target) == key for t in small.targets):
                return [small.value], True
        return [], False
    if isinstance(stmt, cst.If):
        values, complete = _block_assigns(key, stmt.body)
        orelse = stmt.orelse
        if orelse is None:
            return values, False
        if isinstance(orelse, cst.If):
            more, rest = _assigned_in(key, orelse)
        else:
            more, rest = _block_assigns(key, orelse.body)
        return values + more, complete and rest
    return [], False


def _block_assigns(key: str, block: cst.BaseSuite) -> tuple[list[cst.BaseExpression], bool]:
    body = list(block.body) if isinstance(block, cst.IndentedBlock) else [block]
    values: list[cst.BaseExpression] = []
    for stmt in reversed(body):
        more, complete = _assigned_in(key, stmt)
        values += more
        if complete:
            return values, True
    return values, False


def _suites(node: cst.CSTNode) -> list[list[cst.CSTNode]]:
    """The statement lists directly under ``node`` (its body, and an ``else`` body), whether or not the index
    records the layout nodes between them."""
    out: list[list[cst.CSTNode]] = []
    for part in (node, getattr(node, "body", None), getattr(node, "orelse", None)):
        if isinstance(part, (cst.IndentedBlock, cst.Module)):
            out.append(list(part.body))
        elif isinstance(part, cst.Else) and isinstance(part.body, cst.IndentedBlock):
            out.append(list(part.body.body))
        elif isinstance(part, cst.BaseCompoundStatement) and isinstance(getattr(part, "body", None), cst.IndentedBlock):
            out.append(list(part.body.body))
    return out


def _integral_results(body: cst.BaseExpression) -> bool:
    """Every value an expression can yield is an integer literal or a comparison: ``1 if x == 1 else 0``."""
    if isinstance(body, cst.IfExp):
        return _integral_results(body.body) and _integral_results(body.orelse)
    return isinstance(body, (cst.Integer, cst.Comparison))


def _lookup_key(call: cst.CSTNode, index: ModuleIndex) -> bool:
    """The cast value is used as a key: ``codes.astype(int).map(labels)`` or ``labels[codes.astype(int)]``
    turns category codes into category values, so the cast restores no number of its own."""
    parent = index.parents.get(call)
    if isinstance(parent, cst.Attribute) and parent.value is call and parent.attr.value == "map":
        grand = index.parents.get(parent)
        return isinstance(grand, cst.Call) and grand.func is parent and bool(grand.args)
    if isinstance(parent, cst.Index):
        element = index.parents.get(parent)
        return isinstance(element, cst.SubscriptElement) and isinstance(index.parents.get(element), cst.Subscript)
    return False


def _index_clamp(operand: cst.BaseExpression) -> bool:
    """``x.clip(0, size - 1)``/``np.clip(x, 0, k - 1)``: clamped into the index range of a domain of
    ``size`` codes — the values are positions in that domain, not a continuous output being restored."""
    if not (isinstance(operand, cst.Call) and call_name(operand) in {"clip", "clamp"}):
        return False
    bounds = [a.value for a in operand.args if a.keyword is None]
    if isinstance(operand.func, cst.Attribute) and (dotted(operand.func.value) or "").split(".")[0] in {"np", "numpy", "torch"}:
        bounds = bounds[1:]
    if len(bounds) < 2 or number(bounds[0]) != 0:
        return False
    upper = bounds[1]
    return isinstance(upper, cst.BinaryOperation) and isinstance(upper.operator, cst.Subtract) and number(upper.right) == 1
