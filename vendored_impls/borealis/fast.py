"""Fast path of ``borealis`` and ``borealis-fixed`` for audits: K shadow runs trained at once.

Each model replays the adapter's ``fit`` + ``sample``: the same data handling (the driver's
scaling, label encoding, public or training class ratios), the module's own ``PATE_GAN`` built
under the run's seed (the same initial weights), its ``randperm``/``rand``/``multinomial`` draws
from a generator positioned where the plain path's global one is after construction
(:func:`dpcheck.vendored_impls._torch_stack.replay`), its Laplace vote noise from
``RandomState(seed)``, the module's own ``moments_acc`` (mapped over the models), and the budget
check at the end of every iteration as upstream's loop has it. A stopped model's generator is
snapshotted and restored before generation, which replays ``torch.manual_seed(seed * 7919 + 1)``.
The networks' layers are computed for all models at once (batched matrix products).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from dpcheck.vendored_impls._common import as_numeric_array
from dpcheck.vendored_impls._torch import (integer_columns, merge_hyperparams, public_bounds, require_bounds,
                                           single_threaded)
from dpcheck.vendored_impls._torch_stack import Stacked, bce, linear, replay
from dpcheck.vendored_impls.borealis.adapter import DEFAULTS


def _modules(fixed: bool) -> tuple[Any, Any, Any]:
    if fixed:
        from dpcheck.vendored_impls.borealis import fixed_evaluate as ev, fixed_helper as helper, fixed_pate_gan as pg
    else:
        from dpcheck.vendored_impls.borealis import upstream_evaluate as ev, upstream_helper as helper, \
            upstream_pate_gan as pg
    return ev, helper, pg


def two_layer(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """``Generator``/``Discriminator.forward``: Linear, LeakyReLU(0.2), Linear, Sigmoid, per model."""
    h = torch.nn.functional.leaky_relu(linear(x, p["main.0.weight"], p["main.0.bias"]), 0.2)
    return torch.sigmoid(linear(h, p["main.2.weight"], p["main.2.bias"]))


def _batch(name: str, fixed: bool, data: np.ndarray, seeds: list[int], rows: int, epsilon: float,
           delta: float | None, hyperparams: dict[str, Any]) -> list[np.ndarray]:
    params = merge_hyperparams(name, DEFAULTS, hyperparams)
    k = int(params["num_teachers"])
    x, _ = as_numeric_array(data, min_rows=k)
    d = x.shape[1]
    bounds = require_bounds(name, params["bounds"], d) if fixed else public_bounds(params["bounds"], d)
    ints = integer_columns(data, x, params["integer_columns"])
    conditional = bool(params["conditional"])
    label_col = int(params["label_column"]) % d if conditional else None
    if conditional and d < 2:
        raise ValueError(f"{name}: conditional mode needs a label column and at least one feature")
    features = np.delete(x, label_col, axis=1) if conditional else x
    feature_cols = [j for j in range(d) if j != label_col]
    labels = np.zeros(len(x))
    classes = None
    ratios = None
    if conditional and fixed:
        classes = np.asarray(params["label_values"], dtype=np.float64)
        if not np.isin(x[:, label_col], classes).all():
            raise ValueError(f"{name}: some labels are not among the public label_values {classes.tolist()}")
        labels = np.argmax(x[:, label_col][:, None] == classes[None, :], axis=1).astype(np.float64)
        given = params["class_ratios"]
        public = (np.full(len(classes), 1.0 / len(classes)) if given is None else np.asarray(given, dtype=np.float64))
        if public.shape != classes.shape or not np.isclose(public.sum(), 1.0):
            raise ValueError(f"{name}: class_ratios must be {len(classes)} probabilities summing to 1")
        ratios = torch.as_tensor(np.asarray(public, dtype=np.float64))
    elif conditional:
        classes, labels = _modules(False)[0].encode_labels(x[:, label_col])
        ratios = torch.from_numpy(np.bincount(labels.astype(np.int64)) / len(labels))
    ev, helper, pg = _modules(fixed)
    if fixed:
        scaled, scaler = ev.preprocess(features, (bounds[0][feature_cols], bounds[1][feature_cols]))
    else:
        scaled, scaler = ev.preprocess(features)
    input_dim = features.shape[1]
    z_dim = max(1, input_dim // 4)
    delta = 1e-5 if delta is None else float(delta)
    batch, lap_scale = int(params["batch_size"]), float(params["lamda"])
    num_moments, lr, max_iterations = int(params["num_moments"]), float(params["lr"]), int(params["max_iterations"])

    K = len(seeds)
    built, gens = zip(*(replay(int(s), lambda: pg.PATE_GAN(
        input_dim=input_dim, z_dim=z_dim, num_teachers=k, target_epsilon=float(epsilon), target_delta=delta,
        conditional=conditional)) for s in seeds))
    rngs = [np.random.RandomState(int(s) % 2**32) for s in seeds]
    G = Stacked([m.generator for m in built], two_layer)
    S = Stacked([m.student_disc for m in built], two_layer)
    T = [Stacked([m.teacher_disc[i] for m in built], two_layer) for i in range(k)]
    opt_g = torch.optim.Adam(G.parameters(), lr=lr)
    opt_s = torch.optim.Adam(S.parameters(), lr=lr)
    opt_t = [torch.optim.Adam(t.parameters(), lr=lr) for t in T]
    l_list = 1 + torch.tensor(range(num_moments))
    accountant = torch.func.vmap(lambda v: helper.moments_acc(k, v, lap_scale, l_list))
    x_t = torch.from_numpy(np.asarray(scaled, dtype=np.float32))
    y_t = torch.from_numpy(np.asarray(labels, dtype=np.float32))
    size = len(x_t) // k
    slices = [(i * size, (i + 1) * size if i != k - 1 else len(x_t)) for i in range(k)]
    alpha = torch.zeros(K, num_moments, dtype=torch.float64)
    eps = [0.0] * K
    its = [0] * K
    active = [float(epsilon) > 0.0 and max_iterations > 0] * K
    snaps: list[dict[str, torch.Tensor] | None] = [None if a else G.snapshot(j) for j, a in enumerate(active)]

    def with_cat(t: torch.Tensor, cats: torch.Tensor) -> torch.Tensor:
        return torch.cat([t, cats.unsqueeze(2)], dim=2) if conditional else t

    def draw_cats(n: int) -> torch.Tensor:
        cats = torch.zeros(K, n)
        if conditional:
            for j in range(K):
                if active[j]:
                    cats[j] = torch.multinomial(ratios, n, replacement=True, generator=gens[j]).float()
        return cats

    def latent(n: int, cats: torch.Tensor) -> torch.Tensor:
        z = torch.zeros(K, n, z_dim)
        for j in range(K):
            if active[j]:
                z[j] = torch.rand(n, z_dim, generator=gens[j])
        return with_cat(z, cats)

    with single_threaded():
        while any(active):
            for j in range(K):
                its[j] += active[j]
            for _ in range(int(params["teacher_iters"])):
                for i in range(k):
                    start, end = slices[i]
                    n = min(end - start, batch)
                    inputs = torch.zeros(K, n, input_dim)
                    cats = torch.zeros(K, n)
                    z = torch.zeros(K, n, z_dim)
                    for j in range(K):
                        if active[j]:
                            idx = start + torch.randperm(end - start, generator=gens[j])[:batch]
                            inputs[j], cats[j] = x_t[idx], y_t[idx]
                            z[j] = torch.rand(n, z_dim, generator=gens[j])
                    fake = G(with_cat(z, cats))
                    T[i].zero_grad()
                    out_real = T[i](with_cat(inputs, cats))
                    out_fake = T[i](with_cat(fake.detach(), cats))
                    (bce(out_real, torch.ones_like(out_real)) + bce(out_fake, torch.zeros_like(out_fake))).sum().backward()
                    opt_t[i].step()
            for _ in range(int(params["student_iters"])):
                cats = draw_cats(batch)
                fake_in = with_cat(G(latent(batch, cats)).detach(), cats)
                with torch.no_grad():
                    votes = sum((t(fake_in) > 0.5).squeeze(2).to(torch.int64) for t in T).to(torch.float64)
                predictions = torch.zeros(K, batch, 1)
                for j in range(K):
                    if active[j]:
                        noise = torch.from_numpy(rngs[j].laplace(loc=0, scale=1 / lap_scale, size=(batch, 1)))
                        predictions[j] = ((votes[j].unsqueeze(1) + noise) > k / 2).to(torch.float64).float()
                output = S(fake_in)
                increments = accountant(votes.unsqueeze(2))
                for j in range(K):
                    if active[j]:
                        alpha[j] = alpha[j] + increments[j]
                S.zero_grad()
                bce(output, predictions).sum().backward()
                opt_s.step()
            cats = draw_cats(batch)
            out_g = S(with_cat(G(latent(batch, cats)), cats))
            G.zero_grad()
            bce(out_g, torch.ones_like(out_g)).sum().backward()
            opt_g.step()
            for j in range(K):
                if active[j]:
                    eps[j] = float(torch.min((alpha[j] + np.log(1 / delta)) / l_list))
                    if not (float(epsilon) > eps[j] and its[j] < max_iterations):
                        active[j], snaps[j] = False, G.snapshot(j)

        for j in range(K):
            G.restore(j, snaps[j])
        released = []
        with torch.no_grad():
            for j, s in enumerate(seeds):  # sample(rows) after torch.manual_seed(seed * 7919 + 1)
                g = torch.Generator().manual_seed(int(s) * 7919 + 1)
                cats = torch.multinomial(ratios, rows, replacement=True, generator=g).float() if conditional else None
                z = torch.rand(rows, z_dim, generator=g)
                z = torch.cat([z, cats.unsqueeze(1)], dim=1) if conditional else z
                synthetic = two_layer({n: p[j:j + 1] for n, p in G.params.items()}, z.unsqueeze(0))[0].numpy()
                if fixed:
                    feature_ints = np.delete(ints, label_col) if label_col is not None else ints
                    out = ev.postprocess(synthetic, scaler, feature_ints)
                else:
                    out = ev.postprocess(synthetic, scaler)
                out = np.asarray(out, dtype=np.float64)
                if label_col is not None:
                    out = np.insert(out, label_col, classes[np.rint(cats.numpy()).astype(np.int64)], axis=1)
                released.append(out)
    return released


def fit_sample_batch(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     **hyperparams: Any) -> list[np.ndarray]:
    """``borealis``: one released dataset per seed."""
    return _batch("borealis", False, data, seeds, rows, epsilon, delta, hyperparams)


def fit_sample_batch_fixed(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                           **hyperparams: Any) -> list[np.ndarray]:
    """``borealis-fixed``: one released dataset per seed."""
    return _batch("borealis-fixed", True, data, seeds, rows, epsilon, delta, hyperparams)
