"""DP201: teachers do not each see one fixed, disjoint partition of the records."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.syntax import call_name, dotted, loop_iter, loop_targets, refs, target_names, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.dataindex import (
    COMPREHENSIONS,
    Dp2Index,
    assigned,
    bound_in,
    data_like,
    functions_by_name,
    index_for,
    range_arg,
)

_PARTITION_NAME = re.compile(r"(?i)part|split|shard|chunk|subset|fold|teacher|disjoint|slices|pieces")
_CONTEXT = re.compile(r"(?i)teacher")
_POPULATE = {"append", "extend", "insert", "add", "__setitem__"}
_PERMUTE = {"permutation", "randperm", "shuffle", "random_split"}
_SPLIT = {"array_split", "split", "chunk", "tensor_split", "hsplit", "vsplit", "random_split"}
_INDEX_DRAW = {"choice", "randint", "integers", "randperm", "permutation", "multinomial", "sample"}
_GENERATED = {"fake", "fakes", "gen", "generated", "synth", "synthetic", "syn", "z", "noise", "latent", "g"}
_FIT_CALLS = {"fit", "partial_fit", "fit_transform"}
_NOT_PRIVATE = {"public", "pub", "student", "test", "val", "valid", "eval", "holdout"}
_REPEAT = {"iter", "iters", "iteration", "iterations", "epoch", "epochs", "step", "steps", "round", "rounds"}
_GENERIC_METHODS = {
    "fit", "train", "__call__", "forward", "run", "step", "update", "sample", "transform",
    "fit_transform", "predict", "call",
}


class NonDisjointPartition(Rule):
    id = "DP201"
    name = "non-disjoint-partition"
    category = "data_partition"
    severity = "error"
    summary = "PATE teachers do not each train on one fixed, disjoint slice of the records"
    rationale = (
        "PATE's privacy argument needs every record to reach exactly one teacher: changing one "
        "record then changes one teacher's vote by at most one, which is what the noise on the "
        "vote counts is calibrated to. The guarantee is void when teachers share records: a "
        "stale loop variable makes every teacher read the same (last) partition (updated), the "
        "permutation that defines the partition is drawn again every training iteration so over "
        "the run every teacher sees every record (synthcity), each teacher's batch is sampled "
        "from the whole dataset (original, turing), slice arithmetic makes neighbouring "
        "slices overlap, every (e.g. scikit-learn) teacher is fitted on the same training data, "
        "or the teacher list repeats one model object so that one model trains on every "
        "partition (`[disc for _ in range(k)]`, `[disc] * len(parts)`, `teachers = [disc for _ in parts]`). Teachers in code with no privacy claim (an "
        "ensemble for knowledge distillation) are not reported. Fix: draw one permutation once, before training, cut it into k "
        "contiguous slices (`np.array_split(perm, k)` or `perm[i*m:(i+1)*m]`), and let teacher "
        "i sample its batches only from slice i, indexed with the teacher loop's own variable."
    )
    TRIGGERS = ("teacher", "Teacher", "TEACHER")
    requires_dp_context = True

    VALID = (
        # the PATE split is drawn once per independent run: the outer loop seeds the generators with its seed
        """
import numpy as np
def split_teachers(x, n_teachers):
    '''PATE teacher partition.'''
    p = np.random.permutation(len(x))
    return np.array_split(x[p], n_teachers)
for seed in [11, 22, 33]:
    np.random.seed(seed)
    parts = split_teachers(data, 10)
    teachers = [train(part) for part in parts]
    report(aggregate(teachers, public_x))
""",
        # a batch's length as the stride: the slices of teacher labels follow the batches, disjoint
        """
def student_batches(loader, teacher_labels):
    for i, (data, target) in enumerate(loader):
        labels = teacher_labels[i * len(data):(i + 1) * len(data)]
        yield data, labels
""",
        # several independent shadow models trained together: each model's permutation is drawn
        # once, in a loop over the models' RNGs, and kept
        """
import numpy as np
def fit_teachers_batch(x, seeds, k, epsilon):
    rngs = [np.random.RandomState(s) for s in seeds]
    size = len(x) // k
    partitions = []
    for rng in rngs:
        idx = rng.permutation(len(x))
        partitions.append([x[idx[i * size:(i + 1) * size]] for i in range(k)])
    return train_pate(partitions, epsilon)
""",
        # one fresh model per partition; per-teacher settings repeated from one value
        """
import copy
import numpy as np
class PATECTGAN:
    def fit(self, data, epsilon):
        parts = np.array_split(data, self.k)
        template = Discriminator(data.shape[1])
        teachers = [Discriminator(data.shape[1]) for _ in parts]
        teacher_nets = [copy.deepcopy(template) for shard in parts]
        init = np.ones(data.shape[1])
        teacher_weights = [init] * len(parts)
        for t, p in zip(teachers, parts):
            t.fit(p)
""",
        # a permutation drawn once, cut into k contiguous slices; the teacher loop uses its own index
        """
import numpy as np
def train(x, k, iters, teachers):
    perm = np.random.permutation(len(x))
    size = len(x) // k
    parts = [x[perm[i * size:(i + 1) * size]] for i in range(k)]
    for _ in range(iters):
        for i in range(k):
            idx = np.random.choice(len(parts[i]), 64)
            teachers[i].train_on_batch(parts[i][idx])
""",
        # array_split once in __init__, zip teachers with their partition
        """
import numpy as np
class PATE:
    def __init__(self, data, num_teachers):
        self.partitions = np.array_split(np.random.permutation(data), num_teachers)
    def fit(self, epochs):
        for _ in range(epochs):
            for teacher, part in zip(self.teachers, self.partitions):
                batch = part[np.random.randint(0, len(part), size=64)]
                teacher.step(batch)
""",
        # per-epoch shuffling of minibatches for a single model is not a partition
        """
import numpy as np
def sgd(model, x, epochs, bs):
    for _ in range(epochs):
        perm = np.random.permutation(len(x))
        for b in range(len(x) // bs):
            model.step(x[perm[b * bs:(b + 1) * bs]])
""",
        # the loop variable is rebound before use in the later loop
        """
def fit(partition_data, k, teachers):
    for i in range(k):
        partition_data.append(load(i))
    for t in range(k):
        i = t
        teachers[t].fit(partition_data[i])
""",
        # teacher loop samples generated rows from a shared fake batch: fine
        """
import torch
def teacher_step(teachers, loaders, generator, n):
    fake = generator(torch.randn(n, 8))
    for i, teacher in enumerate(teachers):
        real = next(iter(loaders[i]))
        idx = torch.randint(0, n, (64,))
        teacher.update(real, fake[idx])
""",
        # Teachers.fit draws a partition but is called once, outside any loop
        """
import numpy as np
class Teachers:
    def fit(self, X):
        perm = np.random.permutation(len(X))
        self.parts = np.array_split(perm, self.k)
class Model:
    def train(self, X, iters):
        self.teachers = Teachers()
        self.teachers.fit(X)
        for _ in range(iters):
            self.step()
""",
        # contiguous, disjoint slice arithmetic with int() rounding
        """
def partition(data, num_teachers):
    n = len(data)
    return [data[int(i * n / num_teachers):int((i + 1) * n / num_teachers)] for i in range(num_teachers)]
""",
        # sklearn teachers each fitted once on their own partition (zip, index and comprehension)
        """
from sklearn.linear_model import LogisticRegression
def train_teachers(X, y, parts, num_teachers):
    teachers = [LogisticRegression().fit(X[p], y[p]) for p in parts]
    for i in range(num_teachers):
        Xi, yi = X[parts[i]], y[parts[i]]
        teachers[i].fit(Xi, yi)
    for teacher, (xp, yp) in zip(teachers, zip(X_parts, y_parts)):
        teacher.fit(xp, yp)
    return teachers
""",
        # teachers label shared public data; a teacher loop fitting on generated rows only
        """
def label_public(teachers, X_public, fake_rows):
    votes = [teacher.predict(X_public) for teacher in teachers]
    for teacher in teachers:
        teacher.partial_fit(fake_rows, [0] * len(fake_rows))
    return votes
""",
        # a DP-SGD loader over the whole dataset: no teachers, not a partition
        """
from torch.utils.data import DataLoader
def make_private(model, train_data, privacy_engine, noise_multiplier):
    loader = DataLoader(train_data, batch_size=256, shuffle=True)
    for epoch in range(10):
        for xb, yb in loader:
            model.fit(xb, yb)
""",
        # knowledge distillation: an ensemble of teachers on the same data, with no privacy claim
        """
from sklearn.ensemble import RandomForestClassifier
def distill(X, y, student, n_teachers=5):
    teachers = [RandomForestClassifier(random_state=s).fit(X, y) for s in range(n_teachers)]
    soft = sum(t.predict_proba(X) for t in teachers) / n_teachers
    return student.fit(X, soft.argmax(1))
""",
        # one fresh model per teacher (constructor or deepcopy inside the loop)
        """
import copy
def build(data, num_teachers, noise_multiplier):
    template = Discriminator(data.shape[1])
    teacher_disc = [Discriminator(data.shape[1]) for _ in range(num_teachers)]
    clones = [copy.deepcopy(template) for _ in range(num_teachers)]
    teachers = []
    for t in range(num_teachers):
        d = Discriminator(data.shape[1])
        teachers.append(d)
    return teacher_disc, clones, teachers
""",
        # dp_pate_train.py (Final_Year_CTGAN): slicing synthetic labels into sampling batches with a strided loop —
        # consecutive slices [i, i + bs) with bs <= the stride do not overlap
        """
def sample_for_teachers(G, labels, n, batch_size, epsilon):
    out = []
    for i in range(0, n, batch_size):
        bs = batch_size
        out.append(G(labels[i:i + bs]))
    return out
""",
        # pretrained teachers only label the same query loader (inference, no training step)
        """
import torch
def collect_pate_votes(teacher_paths, query_loader, device):
    votes = []
    for i, path in enumerate(teacher_paths):
        teacher = torch.load(path).to(device)
        teacher.train()
        outs = []
        for batch, _ in query_loader:
            with torch.no_grad():
                outs.append(teacher(batch.to(device)).argmax(1))
        votes.append(torch.cat(outs))
    return torch.stack(votes)
""",
        """
def pate_teacher_answers(teachers, public_loader):
    answers = []
    for t in range(len(teachers)):
        xb, _ = next(iter(public_loader))
        answers.append(teachers[t].predict(xb))
    return answers
""",
    )

    INVALID = (
        # the twin: the split is re-drawn on every pass of a training loop (no reseeding)
        """
import numpy as np
def split_teachers(x, n_teachers):
    '''PATE teacher partition.'''
    p = np.random.permutation(len(x))  # <-
    return np.array_split(x[p], n_teachers)
for step in range(100):
    parts = split_teachers(data, 10)
    teachers = [train(part) for part in parts]
    student.update(aggregate(teachers, public_x))
""",
        # updated: partitions built with i, teachers read the stale i
        """
import numpy as np
def pategan(x_train, k, epsilon, iters):
    x_partition = []
    no = len(x_train)
    idx = np.random.permutation(no)
    for i in range(k):
        x_partition = x_partition + [x_train[idx[i * no // k:(i + 1) * no // k]]]
    for _ in range(iters):
        for _ in range(k):
            temp_x = x_partition[i]  # <-
            fit_teacher(temp_x)
""",
        # synthcity: Teachers.fit re-draws the partition and the plugin calls it every iteration
        """
import numpy as np
class Teachers:
    '''PATE teachers.'''
    def fit(self, X, generator):
        permutations = np.random.permutation(len(X))  # <-
        for tidx in range(self.n_teachers):
            teacher_idx = permutations[int(tidx * self.samples_per_teacher):int((tidx + 1) * self.samples_per_teacher)]
            self.models[tidx].fit(X[teacher_idx], generator(len(teacher_idx)))
class PATEGAN:
    def fit(self, X):
        self.teachers = Teachers()
        while self.eps_hat < self.epsilon:
            self.teachers.fit(X, self.generate)
""",
        # original: per-teacher batch sampled from the whole data through a helper
        """
import numpy as np
def sample_X(m, n):
    return np.random.permutation(m)[:n]
def PATE_GAN(X_train, epsilon, delta, niter, num_teachers, mb_size=128):
    No = len(X_train)
    for it in range(niter):
        for _ in range(num_teachers):
            X_idx = sample_X(No, mb_size)  # <-
            X_mb = X_train[X_idx, :]
            train_disc(X_mb)
""",
        # turing-style inline draw with np.random.choice
        """
import numpy as np
class PATEGAN:
    def fit(self, data):
        for _ in range(self.n_iters):
            for _ in range(self.num_teachers):
                batch = data[np.random.choice(data.shape[0], self.batch_size)]  # <-
                self.step(batch)
""",
        # partition drawn inside the training loop (torch), teachers indexed by slice
        """
import torch
def train(X, teachers, epochs, m, epsilon):
    for epoch in range(epochs):
        perm = torch.randperm(X.shape[0])  # <-
        for t, teacher in enumerate(teachers):
            teacher.fit(X[perm[t * m:(t + 1) * m]])
""",
        # the strided spelling with a window twice the stride: neighbouring teachers share rows
        """
def fit_teachers(data, teachers, shard, epsilon):
    for i in range(0, len(data), shard):
        teachers[i // shard].fit(data[i:i + 2 * shard])  # <-
""",
        # overlapping slice arithmetic: each teacher gets two partitions' worth of rows
        """
def split_for_teachers(data, num_teachers):
    '''Disjoint partitions for the PATE teachers.'''
    size = len(data) // num_teachers
    return [data[i * size:(i + 2) * size] for i in range(num_teachers)]  # <-
""",
        # comprehension over teachers reading the leftover partition index
        """
def build(data, n_teachers, epsilon):
    shards = []
    for j in range(n_teachers):
        shards.append(data[j::n_teachers])
    return [Teacher().fit(shards[j]) for _ in range(n_teachers)]  # <-
""",
        # sklearn teachers all fitted on the same training data (comprehension spelling)
        """
from sklearn.linear_model import LogisticRegression
def train_teachers(X_train, y_train, num_teachers, epsilon):
    return [LogisticRegression(random_state=s).fit(X_train, y_train) for s in range(num_teachers)]  # <-
""",
        # loop spellings: a fresh forest per teacher, then re-fitting every teacher, on all of X
        """
from sklearn.ensemble import RandomForestClassifier
class PATE:
    def fit(self, X, y):
        self.teachers = []
        for t in range(self.n_teachers):
            clf = RandomForestClassifier(n_estimators=10, random_state=t)
            clf.fit(X, y)  # <-
            self.teachers.append(clf)
        for teacher in self.teachers:
            teacher.partial_fit(self.data, y)  # <-
""",
        # the product or comprehension runs over the partitions; the target names the teachers
        """
import numpy as np
class PATECTGAN:
    def fit(self, data, epsilon):
        parts = np.array_split(data, self.k)
        disc = Discriminator(data.shape[1])
        teachers = [disc] * len(parts)  # <-
        self.teacher_models = [disc for _ in parts]  # <-
        teacher_nets = list(disc for shard in parts)  # <-
        for t, p in zip(teachers, parts):
            t.fit(p)
""",
        # one discriminator object repeated as every teacher (comprehension, list product, append)
        """
import torch.nn as nn
class PATECTGANLike:
    def fit(self, data, noise_multiplier):
        disc = Discriminator(data.shape[1]).to(self.device)
        teacher_disc = [disc for _ in range(self.num_teachers)]  # <-
        teachers = [disc] * self.num_teachers  # <-
        self.teachers = []
        for t in range(self.num_teachers):
            self.teachers.append(disc)  # <-
""",
        # every teacher trained over the same loader of the whole training set
        """
import torch
def train_pate_teachers(teachers, train_loader, optimizers, loss_fn):
    for i, teacher in enumerate(teachers):
        for xb, yb in train_loader:  # <-
            optimizers[i].zero_grad()
            loss_fn(teacher(xb), yb).backward()
            optimizers[i].step()
""",
        """
def pate_teacher_round(teachers, train_loader, opt):
    for t in range(len(teachers)):
        xb, yb = next(iter(train_loader))  # <-
        teachers[t].train_on_batch(xb, yb)
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        index = index_for(self.ctx)
        self._seen: set[cst.CSTNode] = set()
        self._stale_index(index)
        self._redrawn_partition(index)
        self._whole_data_batches(index)
        self._overlapping_slices(index)
        self._one_shared_model(index)

    def _emit(self, node: cst.CSTNode, message: str) -> None:
        """Report ``node`` once; the core's DP-context gate (``requires_dp_context``) drops it
        outside DP code: teachers without any other DP signal are an ensemble (e.g. knowledge
        distillation), not PATE."""
        if node in self._seen:
            return
        self._seen.add(node)
        self.report(node, message)

    # ---- 1. stale loop variable ------------------------------------------------------------
    def _stale_index(self, index: Dp2Index) -> None:
        bindings: dict[cst.CSTNode, list[tuple[str, int]]] = {}
        by_var: dict[str, list[cst.For]] = {}
        for lp in index.loops:
            if isinstance(lp, cst.For):
                for name in target_names(lp.target):
                    by_var.setdefault(name, []).append(lp)
        bound_cache: dict[cst.CSTNode, set[str]] = {}
        for sub in walk(index.module):
            if not isinstance(sub, cst.Subscript):
                continue
            container = dotted(sub.value)
            if container is None:
                continue
            keys = [
                el.slice.value.value
                for el in sub.slice
                if isinstance(el.slice, cst.Index) and isinstance(el.slice.value, cst.Name)
            ]
            if not keys:
                continue
            loops = [lp for lp in index.enclosing_loops(sub) if not _in_header(index, sub, lp)]
            if not loops:
                continue
            scope = index.scope_of(sub)
            for var in keys:
                if var not in by_var or any(var in loop_targets(lp) for lp in index.enclosing_loops(sub)):
                    continue
                source = self._stale_source(index, scope, sub, var, loops, by_var[var], bindings, bound_cache)
                if source is None:
                    continue
                if not (_populated_in(source, container) or _PARTITION_NAME.search(container.split(".")[-1])):
                    continue
                self._emit(
                    sub,
                    f"`{container}[{var}]` uses `{var}` left over from the loop on line "
                    f"{self.ctx.analysis.line_of(source)}: every pass of this loop reads the same (last) "
                    "partition, so the teachers share one slice instead of a disjoint slice each; "
                    "index with this loop's own variable",
                )

    @staticmethod
    def _stale_source(
        index: Dp2Index,
        scope: cst.CSTNode,
        read: cst.CSTNode,
        var: str,
        loops: list[cst.CSTNode],
        candidates: list[cst.For],
        cache: dict[cst.CSTNode, list[tuple[str, int]]],
        bound_cache: dict[cst.CSTNode, set[str]],
    ) -> cst.For | None:
        at = index.order[read]
        sources = [lp for lp in candidates if index.last[lp] < at and index.scope_of(lp) is scope]
        if not sources:
            return None
        source = max(sources, key=lambda lp: index.order[lp])
        end = index.last[source]
        later = [lp for lp in loops if index.order[lp] > end]
        if not later:
            return None
        for lp in later:
            if lp not in bound_cache:
                bound_cache[lp] = bound_in(lp)
            if var in bound_cache[lp]:
                return None
        if scope not in cache:
            cache[scope] = _binding_sites(index, scope)
        if any(name == var and end < pos < at for name, pos in cache[scope]):
            return None
        return source

    # ---- 2. partition permutation re-drawn every iteration ---------------------------------
    def _redrawn_partition(self, index: Dp2Index) -> None:
        by_name = functions_by_name(index)
        for call in index.calls:
            if call_name(call) not in _PERMUTE:
                continue
            scope = index.scope_of(call)
            shuffled = _shuffled_names(call, index, scope)
            cut = _cut_of(call, shuffled, index, scope)
            if cut is None:
                continue
            loops = [lp for lp in index.enclosing_loops(call) if not _in_header(index, call, lp)]
            cut_loops = set(index.enclosing_loops(cut))
            per_teacher = [lp for lp in loops if lp in cut_loops and _slices_by(cut, lp)]
            if per_teacher:
                if _CONTEXT.search(index.text_of(per_teacher[0])):
                    self._emit(
                        call,
                        "each teacher draws its own random subset of all rows, so the subsets "
                        "overlap and records reach several teachers; draw one permutation before "
                        "the teacher loop and give teacher i slice i",
                    )
                continue
            outer = [lp for lp in loops if index.inside(cut, lp)]
            if outer and (_kept_per_pass(outer[-1], shuffled) or _seeded_runs(outer[-1])):
                continue
            if outer:
                if _CONTEXT.search(index.text_of(outer[0])) or _CONTEXT.search(_context_code(index, call)):
                    self._emit(
                        call,
                        f"the teacher partition is re-drawn on every pass of the loop on line "
                        f"{self.ctx.analysis.line_of(outer[-1])}: over the run every teacher sees every "
                        "record; draw the permutation once before training and reuse its slices",
                    )
                continue
            if not isinstance(scope, cst.FunctionDef):
                continue
            caller = _called_in_loop(index, scope, by_name)
            if caller is None or _seeded_runs(caller):
                continue
            if not (_CONTEXT.search(_context_code(index, call)) or _CONTEXT.search(index.text_of(caller))):
                continue
            self._emit(
                call,
                f"the teacher partition is re-drawn every time `{scope.name.value}` runs, and it "
                f"runs on every training iteration (line {self.ctx.analysis.line_of(caller)}): over the run "
                "every teacher sees every record; draw the permutation once (e.g. in __init__) "
                "and reuse its slices",
            )

    # ---- 3. per-teacher batches sampled from the whole dataset -----------------------------
    def _whole_data_batches(self, index: Dp2Index) -> None:
        samplers = _sampler_functions(index)
        taints: dict[cst.CSTNode, set[str]] = {}
        for loop in [*index.loops, *(n for n in walk(index.module) if isinstance(n, COMPREHENSIONS))]:
            if isinstance(loop, cst.While) or not _is_teacher_loop(index, loop):
                continue
            body = loop.body if isinstance(loop, cst.For) else loop
            local = _bound_locally(loop)
            if loop not in taints:
                taints[loop] = _per_teacher_names(loop)
            own = taints[loop]
            for call in walk(body, into_scopes=False):
                if isinstance(call, cst.For) and _shared_loader(call.iter, own, local):
                    if _trains(call.body):
                        self._emit(call.iter, _LOADER_MSG)
                    continue
                if not isinstance(call, cst.Call):
                    continue
                name = call_name(call)
                if name == "next" and call.args and _shared_loader(call.args[0].value, own, local):
                    if _trains(body):
                        self._emit(call, _LOADER_MSG)
                    continue
                if name == "DataLoader" and call.args:
                    pool = call.args[0].value
                    if data_like(dotted(pool) or "") and _shared_data(pool, own, local):
                        self._emit(call, _LOADER_MSG)
                        continue
                if name in _FIT_CALLS and self._fits_shared(call, index, loop, taints, local):
                    continue
                if name not in samplers and name not in _INDEX_DRAW:
                    continue
                tainted: set[str] = set()
                for lp in index.enclosing_loops(call):
                    if lp not in taints:
                        taints[lp] = _per_teacher_names(lp)
                    tainted |= taints[lp]
                    if lp is loop:
                        break
                if refs(call) & tainted:
                    continue
                if name in samplers and samplers[name] is not None:
                    pos = samplers[name]
                    args = [a.value for a in call.args if a.keyword is None]
                    if pos < len(args) and _shared_data(args[pos], tainted, local):
                        self._emit(call, _WHOLE_MSG)
                    continue
                if name in {"choice", "sample"}:
                    pool = _drawn_from(call)
                    if pool is not None and data_like(dotted(pool) or "") and _shared_data(pool, tainted, local):
                        self._emit(call, _WHOLE_MSG)
                        continue
                if name == "sample" and not isinstance(call.func, cst.Name) and not _is_random_module(call.func):
                    continue
                target = _indexed_data(call, body)
                if target is not None and _shared_data(target, tainted, local):
                    self._emit(call, _WHOLE_MSG)

    def _fits_shared(self, call: cst.Call, index: Dp2Index, loop: cst.CSTNode,
                     taints: dict[cst.CSTNode, set[str]], local: set[str]) -> bool:
        """``clf.fit(X, y)`` inside the teacher loop with ``X`` the same array for every teacher."""
        args = [a.value for a in call.args if a.keyword is None]
        if not args:
            return False
        data = args[0]
        tainted: set[str] = set()
        for lp in index.enclosing_loops(call):
            tainted |= taints.setdefault(lp, _per_teacher_names(lp))
            if lp is loop:
                break
        name = dotted(data) or ""
        if not data_like(name) or words(name.split(".")[-1]) & _NOT_PRIVATE or not _shared_data(data, tainted, local):
            return False
        self._emit(
            call,
            f"every teacher is fitted on the same data `{dotted(data)}` instead of its own disjoint "
            "partition, so each record reaches every teacher and one record can change all votes; "
            "fit teacher i only on partition i",
        )
        return True

    # ---- 5. every teacher is the same model object ----------------------------------------
    def _one_shared_model(self, index: Dp2Index) -> None:
        for node in walk(index.module):
            if isinstance(node, (cst.ListComp, cst.GeneratorExp)) and (
                    _is_teacher_loop(index, node) or _teacher_target(index, node)):
                elt = node.elt
                if dotted(elt) is not None and not refs(elt) & loop_targets(node):
                    self._shared(elt, node, index)
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
                seq = node.left if isinstance(node.left, (cst.List, cst.Tuple)) else node.right
                count = node.right if seq is node.left else node.left
                if isinstance(seq, (cst.List, cst.Tuple)) and len(seq.elements) == 1 and (
                        "teacher" in index.code(count).lower() or _teacher_target(index, node)):
                    self._shared(seq.elements[0].value, node, index)
            elif isinstance(node, cst.For) and _is_teacher_loop(index, node):
                local = bound_in(node) | loop_targets(node)
                for call in walk(node.body, into_scopes=False):
                    if isinstance(call, cst.Call) and call_name(call) == "append" and len(call.args) == 1 \
                            and isinstance(call.func, cst.Attribute) and "teacher" in (dotted(call.func.value) or "").lower():
                        value = call.args[0].value
                        if dotted(value) is not None and not refs(value) & local:
                            self._shared(value, call, index)

    def _shared(self, model: cst.BaseExpression, at: cst.CSTNode, index: Dp2Index) -> None:
        """Report ``at`` when ``model`` names one object constructed once in the same scope."""
        name = dotted(model)
        scope = index.scope_of(at)
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, (cst.Assign, cst.AnnAssign)) and isinstance(sub.value, cst.Call) \
                    and name in assigned(sub)[0] and index.order[sub] < index.order[at]:
                self._emit(
                    at,
                    f"every teacher is the same model object `{name}`: training teacher i on "
                    "partition i trains that one model on every partition, so each record reaches "
                    "every teacher's vote; construct one model per teacher",
                )
                return

    # ---- 4. overlapping slice arithmetic ---------------------------------------------------
    def _overlapping_slices(self, index: Dp2Index) -> None:
        for sub in walk(index.module):
            if not isinstance(sub, cst.Subscript) or len(sub.slice) != 1:
                continue
            sl = sub.slice[0].slice
            if not isinstance(sl, cst.Slice) or sl.step is not None or sl.lower is None or sl.upper is None:
                continue
            loops = index.enclosing_loops(sub)
            stride: tuple[cst.BaseExpression, cst.BaseExpression] | None = None
            bounds = (refs(sl.lower) if sl.lower is not None else set()) | (
                refs(sl.upper) if sl.upper is not None else set()
            )
            hits: list[str] = []
            for lp in loops:
                hits = sorted(loop_targets(lp) & bounds)
                if hits:
                    stride = _range_stride(lp)
                    break
            if not hits or not _CONTEXT.search(_context_code(index, sub)):
                continue
            # ``[i*len(xb):(i+1)*len(xb)]`` in ``for i, xb in …``: the slices overlap only if they do
            # along every loop target the bounds read, not along a batch whose length is the stride
            if all(_overlaps(sl, v, stride) for v in hits):
                var = hits[0]
                self._emit(
                    sub,
                    "slice arithmetic makes consecutive teachers' slices overlap (the end of "
                    f"slice `{var}` lies past the start of slice `{var}+1`), so records are shared "
                    "between teachers; use [i*m:(i+1)*m] or np.array_split",
                )


_WHOLE_MSG = (
    "inside the teacher loop each teacher's batch is sampled from the whole dataset, not from "
    "its own partition: every teacher sees every record; sample teacher i's batch only from "
    "partition i"
)


_LOADER_MSG = (
    "inside the teacher loop every teacher iterates over the same data loader of the whole "
    "dataset, not over its own partition: every teacher sees every record; build one loader per "
    "disjoint partition and let teacher i read only loader i"
)


#: calls of a training step: a teacher that only predicts on a shared loader (labelling the same queries,
#: as every PATE teacher does) reads no private record of another teacher
_TRAIN_STEP_CALLS = frozenset({"backward", "step", "zero_grad", "apply_gradients", "minimize", "fit",
                               "train_on_batch", "train_step", "training_step", "partial_fit"})


def _trains(body: cst.CSTNode) -> bool:
    """Does ``body`` take a training step (not only ``model.train()``, which switches a mode)?"""
    return any(isinstance(n, cst.Call) and call_name(n) in _TRAIN_STEP_CALLS for n in walk(body))


def _shared_loader(expr: cst.BaseExpression, tainted: set[str], local: set[str]) -> bool:
    if isinstance(expr, cst.Call) and call_name(expr) in {"iter", "enumerate", "tqdm", "cycle"} and expr.args:
        expr = expr.args[0].value
    name = dotted(expr)
    if name is None or name in tainted or name in local:
        return False
    return bool(words(name.split(".")[-1]) & {"loader", "dataloader", "loaders"}) and not _generated(expr)


# ---- helpers -------------------------------------------------------------------------------
def _in_header(index: Dp2Index, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    if isinstance(loop, cst.For):
        return index.inside(node, loop.iter) or index.inside(node, loop.target)
    if isinstance(loop, cst.While):
        return index.inside(node, loop.test)
    return False


def _binding_sites(index: Dp2Index, scope: cst.CSTNode) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for sub in walk(scope, into_scopes=False):
        names: set[str] = set()
        if isinstance(sub, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr)):
            names = assigned(sub)[0]
        elif isinstance(sub, cst.For):
            names = target_names(sub.target)
        elif isinstance(sub, cst.AsName):
            names = target_names(sub.name)
        out.extend((n, index.order[sub]) for n in names)
    return out


def _populated_in(loop: cst.For, container: str) -> bool:
    for sub in walk(loop.body):
        if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute):
            if sub.func.attr.value in _POPULATE and dotted(sub.func.value) == container:
                return True
        elif isinstance(sub, (cst.Assign, cst.AugAssign)):
            targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target]
            for t in targets:
                if isinstance(t, cst.Subscript) and dotted(t.value) == container:
                    return True
                if dotted(t) == container and (isinstance(sub, cst.AugAssign) or container in refs(sub.value)):
                    return True
    return False


def _shuffled_names(call: cst.Call, index: Dp2Index, scope: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    parent = index.parents.get(call)
    if isinstance(parent, (cst.Assign, cst.AnnAssign)):
        names |= assigned(parent)[0]
    elif isinstance(parent, cst.Expr) and call.args:
        arg = dotted(call.args[0].value)
        if arg:
            names.add(arg)
    if not names:
        return names
    start = index.order[call]
    for _ in range(2):
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, (cst.Assign, cst.AnnAssign)) and index.order[sub] > start and sub.value is not None:
                value = sub.value
                if isinstance(value, (cst.Subscript, cst.Call)) and refs(value) & names:
                    if isinstance(value, cst.Call) and call_name(value) in {"len", "int", "sum", "mean"}:
                        continue
                    names |= assigned(sub)[0]
    return names


def _cut_of(call: cst.Call, names: set[str], index: Dp2Index, scope: cst.CSTNode) -> cst.CSTNode | None:
    """Where the permutation ``call`` (or the names holding it) is cut into per-teacher pieces."""
    if call_name(call) == "random_split":
        return call
    parent = index.parents.get(call)
    if isinstance(parent, cst.Arg):
        outer = index.parents.get(parent)
        if isinstance(outer, cst.Call) and call_name(outer) in _SPLIT:
            return outer
    for sub in walk(scope, into_scopes=False):
        if isinstance(sub, cst.Call) and call_name(sub) in _SPLIT and sub is not call:
            receiver = sub.func.value if isinstance(sub.func, cst.Attribute) else None
            first = sub.args[0].value if sub.args else None
            pieces = refs(first) if first is not None else set()
            if receiver is not None and dotted(receiver) in names:
                return sub
            if pieces & names and index.order[sub] > index.order[call]:
                return sub
        elif isinstance(sub, cst.Subscript) and (dotted(sub.value) in names or sub.value is call):
            for el in sub.slice:
                if isinstance(el.slice, cst.Slice) and _loop_sliced(index, sub, el.slice):
                    return sub
    return None


_SEEDING = frozenset({"seed", "manual_seed", "manual_seed_all", "set_seed", "set_random_seed", "RandomState",
                      "default_rng", "PRNGKey", "seed_everything"})


def _seeded_runs(loop: cst.CSTNode) -> bool:
    """A ``for`` whose variable seeds the random generators (``for seed in seeds: np.random.seed(seed)``):
    each pass is an independent run of the whole experiment, not a training iteration."""
    if not isinstance(loop, cst.For):
        return False
    names = {n.value for n in walk(loop.target) if isinstance(n, cst.Name)}
    return bool(names) and any(
        isinstance(n, cst.Call) and call_name(n).split(".")[-1] in _SEEDING
        and any(isinstance(a.value, cst.Name) and a.value.value in names for a in n.args)
        for n in walk(loop.body))


def _loop_sliced(index: Dp2Index, sub: cst.CSTNode, sl: cst.Slice) -> bool:
    bounds = set()
    for part in (sl.lower, sl.upper, sl.step):
        if part is not None:
            bounds |= refs(part)
    return any(loop_targets(lp) & bounds for lp in index.enclosing_loops(sub))


def _kept_per_pass(loop: cst.CSTNode, shuffled: set[str]) -> bool:
    """A ``for`` over a collection (seeds, models, RNGs — not a ``range`` of iterations) that stores
    each pass's partition in a container: one partition per item, drawn once, not re-drawn."""
    if not isinstance(loop, cst.For):
        return False
    it = loop.iter
    if isinstance(it, cst.Call) and call_name(it) in {"range", "enumerate", "count"}:
        return False
    for node in walk(loop.body):
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in _POPULATE
                and any(refs(arg.value) & shuffled for arg in node.args)):
            return True
    return False


def _slices_by(cut: cst.CSTNode, loop: cst.CSTNode) -> bool:
    return bool(loop_targets(loop) & refs(cut))


def _context_code(index: Dp2Index, node: cst.CSTNode) -> str:
    parts = []
    fn = index.enclosing_function(node)
    if fn is not None:
        parts.append(index.text_of(fn))
    cls = index.enclosing_class(node)
    if cls is not None:
        parts.append(cls.name.value)
    if fn is None and cls is None:
        parts.append(index.text_of(node))
    return "\n".join(parts)


def _called_in_loop(
    index: Dp2Index, fn: cst.FunctionDef, by_name: dict[str, list[cst.FunctionDef]], depth: int = 0
) -> cst.CSTNode | None:
    """The loop around a call of ``fn`` made from elsewhere in the module (up to two helper
    functions in between), if any."""
    name = fn.name.value
    cls = index.enclosing_class(fn)
    for call in index.calls:
        if index.inside(call, fn):
            continue
        func = call.func
        matched = False
        if cls is not None and name == "__init__":
            matched = isinstance(func, cst.Name) and func.value == cls.name.value
        elif cls is None:
            matched = isinstance(func, cst.Name) and func.value == name
        elif isinstance(func, cst.Attribute) and func.attr.value == name:
            receiver = dotted(func.value) or ""
            if receiver == "self":
                matched = index.enclosing_class(call) is cls
            else:
                matched = bool(words(receiver.split(".")[-1]) & words(cls.name.value)) or (
                    name not in _GENERIC_METHODS and len(by_name.get(name, [])) == 1
                ) or _constructed_as(index, receiver, cls.name.value)
        if not matched:
            continue
        loops = [lp for lp in index.enclosing_loops(call) if not _in_header(index, call, lp)]
        if loops:
            return loops[-1]
        caller = index.enclosing_function(call)
        if caller is not None and caller is not fn and depth < 2:
            outer = _called_in_loop(index, caller, by_name, depth + 1)
            if outer is not None:
                return outer
    return None


def _constructed_as(index: Dp2Index, receiver: str, cls_name: str) -> bool:
    for sub in walk(index.module):
        if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) and call_name(sub.value) == cls_name:
            if receiver in assigned(sub)[0]:
                return True
    return False


def _is_teacher_loop(index: Dp2Index, loop: cst.CSTNode) -> bool:
    it = loop_iter(loop)
    if it is None:
        return False
    names = refs(it) | loop_targets(loop)
    if any("teacher" in n.lower() and not (words(n) & _REPEAT) for n in names):
        return True
    arg = range_arg(it)
    if arg is not None and (dotted(arg) or "").split(".")[-1] in {"k", "K", "n_t", "num_t", "n_parts", "num_parts"}:
        return bool(_CONTEXT.search(_context_code(index, loop)))
    return False


def _teacher_target(index: Dp2Index, node: cst.CSTNode) -> bool:
    """``teachers = [disc] * len(parts)``, ``self.teacher_models = [m for _ in shards]``,
    ``teachers = list(d for _ in parts)``: the collection is stored as the teachers."""
    holder = index.parents.get(node)
    if isinstance(holder, cst.Arg):
        call = index.parents.get(holder)
        if isinstance(call, cst.Call) and call_name(call) in {"list", "tuple", "ModuleList"}:
            holder = index.parents.get(call)
    if isinstance(holder, (cst.Assign, cst.AnnAssign)):
        names, _ = assigned(holder)
        return any(_names_teachers(name.split(".")[-1]) for name in names)
    return False


#: per-teacher values that are not models (``teacher_weights = [w] * k`` is fine)
_TEACHER_VALUES = {
    "weight", "weights", "vote", "votes", "count", "counts", "score", "scores", "loss", "losses", "pred",
    "preds", "label", "labels", "data", "idx", "indices", "part", "parts", "size", "sizes", "n", "num",
    "ids", "names", "seed", "seeds", "lr", "opt", "optimizer", "optimizers", "eps", "epsilon",
}


def _names_teachers(name: str) -> bool:
    ws = words(name)
    return bool(ws & {"teacher", "teachers"}) and not ws & _TEACHER_VALUES


def _per_teacher_names(loop: cst.CSTNode) -> set[str]:
    tainted = set(loop_targets(loop))
    if not isinstance(loop, cst.For):
        return tainted
    for _ in range(2):
        for sub in walk(loop.body, into_scopes=False):
            if isinstance(sub, (cst.Assign, cst.AnnAssign)) and sub.value is not None:
                if refs(sub.value) & tainted:
                    tainted |= assigned(sub)[0]
            elif isinstance(sub, cst.For) and refs(sub.iter) & tainted:
                tainted |= target_names(sub.target)
    return tainted


def _sampler_functions(index: Dp2Index) -> dict[str, int | None]:
    """Module functions that return random indices (None) or a random batch of parameter #k."""
    out: dict[str, int | None] = {}
    for fn in index.functions:
        draws = [c for c in walk(fn.body) if isinstance(c, cst.Call) and call_name(c) in _INDEX_DRAW]
        if not draws:
            continue
        names = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
        if names and names[0] in {"self", "cls"}:
            names = names[1:]
        derived: set[str] = set()
        for _ in range(2):
            for sub in walk(fn.body, into_scopes=False):
                if isinstance(sub, (cst.Assign, cst.AnnAssign)) and sub.value is not None:
                    if refs(sub.value) & derived or any(n in draws for n in walk(sub.value)):
                        derived |= assigned(sub)[0]
        for ret in walk(fn.body, into_scopes=False):
            if not isinstance(ret, cst.Return) or ret.value is None:
                continue
            value = ret.value
            random = refs(value) & derived or any(n in draws for n in walk(value))
            if not random:
                continue
            if isinstance(value, cst.Subscript) and dotted(value.value) in names:
                out[fn.name.value] = names.index(dotted(value.value))
            else:
                out[fn.name.value] = None
            break
    return out


def _drawn_from(call: cst.Call) -> cst.BaseExpression | None:
    """The array a ``choice``/``sample`` call draws rows from directly (not an index range)."""
    args = [a.value for a in call.args if a.keyword is None]
    if call_name(call) == "sample" and isinstance(call.func, cst.Attribute) and not _is_random_module(call.func):
        return call.func.value
    if args and isinstance(args[0], (cst.Name, cst.Attribute)):
        return args[0]
    return None


def _is_random_module(func: cst.BaseExpression) -> bool:
    name = dotted(func) or ""
    return name in {"random.sample", "rng.sample"}


def _indexed_data(call: cst.Call, body: cst.CSTNode) -> cst.BaseExpression | None:
    """The array that the random indices drawn by ``call`` select rows of, if it is shared."""
    holders: set[str] = set()
    node: cst.CSTNode = call
    for sub in walk(body, into_scopes=False):
        if isinstance(sub, (cst.Assign, cst.AnnAssign)) and sub.value is not None:
            if any(n is call for n in walk(sub.value)) and not _directly_indexes(sub.value, call):
                holders |= assigned(sub)[0]
    for sub in walk(body, into_scopes=False):
        if isinstance(sub, cst.Subscript):
            index_refs = set()
            direct = False
            for el in sub.slice:
                if isinstance(el.slice, cst.Index):
                    index_refs |= refs(el.slice.value)
                    direct = direct or any(n is node for n in walk(el.slice.value))
            if direct or index_refs & holders:
                base = sub.value
                if isinstance(base, cst.Attribute) and base.attr.value in {"iloc", "loc"}:
                    base = base.value
                return base
    return None


def _shared_data(expr: cst.BaseExpression, tainted: set[str], local: set[str]) -> bool:
    """True when ``expr`` is one array shared by all teachers (not per-teacher, not generated)."""
    names = refs(expr)
    return not (names & tainted) and not (names & local) and not _generated(expr)


def _bound_locally(loop: cst.CSTNode) -> set[str]:
    return bound_in(loop.body) if isinstance(loop, cst.For) else bound_in(loop)


def _directly_indexes(value: cst.BaseExpression, call: cst.Call) -> bool:
    if isinstance(value, cst.Subscript):
        return any(
            isinstance(el.slice, cst.Index) and any(n is call for n in walk(el.slice.value))
            for el in value.slice
        )
    return False


def _generated(expr: cst.BaseExpression) -> bool:
    name = (dotted(expr) or "").split(".")[-1]
    if not name:
        return False
    return bool(words(name) & _GENERATED) or name.startswith(("G_", "g_"))


# ---- slice arithmetic ------------------------------------------------------------------------
_VALUE_SETS = ((1009, 2017, 3023, 4001, 5003, 6007), (9001, 7001, 5003, 3001, 2003, 1009))


def _range_stride(loop: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``for i in range(start, stop, step)``: (start, step) — the loop variable moves by ``step``, not by one."""
    it = getattr(loop, "iter", None)
    if not (isinstance(it, cst.Call) and call_name(it) == "range" and isinstance(it.func, cst.Name)):
        return None
    args = [a.value for a in it.args if a.keyword is None and not a.star]
    return (args[0], args[2]) if len(args) == 3 else None


def _overlaps(sl: cst.Slice, var: str, stride: tuple[cst.BaseExpression, cst.BaseExpression] | None = None) -> bool:
    verdicts = []
    for values in _VALUE_SETS:
        env: dict[str, float] = {}
        pool = iter(values * 4)
        slices = []
        start, step = (0.0, 1.0) if stride is None else (_num(stride[0], env, pool), _num(stride[1], env, pool))
        if start is None or step is None:
            return False
        for i in range(4):
            env[var] = start + i * step
            lo = 0.0 if sl.lower is None else _num(sl.lower, env, pool)
            hi = float("inf") if sl.upper is None else _num(sl.upper, env, pool)
            if lo is None or hi is None:
                return False
            slices.append((lo, hi))
        if not all(lo < hi for lo, hi in slices):
            continue
        verdicts.append(any(slices[i][1] > slices[i + 1][0] for i in range(3)))
    return bool(verdicts) and all(verdicts)


def _num(expr: cst.BaseExpression, env: dict[str, float], pool) -> float | None:
    if isinstance(expr, cst.Integer):
        return float(int(expr.value.replace("_", ""), 0))
    if isinstance(expr, cst.Float):
        return float(expr.value)
    if isinstance(expr, (cst.Name, cst.Attribute)):
        key = dotted(expr)
        if key is None:
            return None
        if key not in env:
            env[key] = float(next(pool))
        return env[key]
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        v = _num(expr.expression, env, pool)
        return None if v is None else -v
    if isinstance(expr, cst.Subscript):
        key = dotted(expr.value)
        if key and key.endswith(".shape"):
            code = cst.Module([]).code_for_node(expr)
            if code not in env:
                env[code] = float(next(pool))
            return env[code]
        return None
    if isinstance(expr, cst.Call) and len(expr.args) == 1:
        name = call_name(expr)
        if name == "len":
            code = "len:" + (dotted(expr.args[0].value) or cst.Module([]).code_for_node(expr.args[0].value))
            if code not in env:
                env[code] = float(next(pool))
            return env[code]
        inner = _num(expr.args[0].value, env, pool)
        if inner is None:
            return None
        if name in {"int", "floor", "trunc"}:
            return float(int(inner)) if name != "floor" else float(int(inner // 1))
        if name == "ceil":
            return float(-int(-inner // 1))
        if name == "round":
            return float(round(inner))
        if name == "float":
            return inner
        return None
    if isinstance(expr, cst.BinaryOperation):
        a = _num(expr.left, env, pool)
        b = _num(expr.right, env, pool)
        if a is None or b is None:
            return None
        op = expr.operator
        try:
            if isinstance(op, cst.Add):
                return a + b
            if isinstance(op, cst.Subtract):
                return a - b
            if isinstance(op, cst.Multiply):
                return a * b
            if isinstance(op, cst.Divide):
                return a / b
            if isinstance(op, cst.FloorDivide):
                return float(a // b)
            if isinstance(op, cst.Modulo):
                return a % b
        except ZeroDivisionError:
            return None
    return None
