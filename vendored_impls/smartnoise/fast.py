"""Fast path of ``smartnoise`` and ``smartnoise-fixed`` for audits: K shadow runs trained at once.

Each model replays ``PATEGAN.train`` of ``upstream_pategan`` (or ``fixed_pategan``) as the
adapter runs it. Its generator, student and teachers are that module's own classes, built under
the run's seed in the plain path's order (the same initial weights); its ``randperm``/``rand``
draws come from a generator positioned where the plain path's global one is after construction
(:func:`dpcheck.vendored_impls._torch_stack.replay`), drawn in the plain path's order; its Laplace
vote noise comes from ``RandomState(seed)``; its accountant is the module's own ``moments_acc``
(tabulated per vote count, :mod:`.fast_accountant`), and each model checks its own budget at the
top of every iteration, as upstream's loop does. A stopped model's generator is snapshotted and
restored before generation, which replays the adapter's ``torch.manual_seed(seed * 7919 + 1)``
and the module's latent draw (``randn`` upstream, ``rand`` in the twin).

What makes it fast, without changing what a model computes:

* the generator's weights change only in the generator step at the end of an iteration, so every
  fake batch the iteration's teacher and student steps use is generated in one batched forward
  pass at its start (no autograd: the plain path detaches them);
* the k teachers of a model are independent of each other, so all K·k teachers take their step
  ``t`` together (one stacked discriminator, real and fake rows in one forward pass);
* the teachers do not change during the student steps, so the votes of all student steps are
  computed at once, and the accountant charges them by vote count.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from dpcheck.vendored_impls._common import as_numeric_array
from dpcheck.vendored_impls._torch import integer_columns, merge_hyperparams, public_bounds, single_threaded
from dpcheck.vendored_impls._torch_stack import Stacked, bce, layer_norm, linear, replay
from dpcheck.vendored_impls.smartnoise.adapter import DEFAULTS
from dpcheck.vendored_impls.smartnoise.fast_accountant import VoteTable


def _modules(fixed: bool) -> tuple[Any, Any]:
    if fixed:
        from dpcheck.vendored_impls.smartnoise import fixed_pategan as pategan, fixed_privacy_utils as utils
    else:
        from dpcheck.vendored_impls.smartnoise import upstream_pategan as pategan, upstream_privacy_utils as utils
    return pategan, utils


def generator_forward(binary: bool) -> Any:
    """``Generator.forward`` (three Linear-LayerNorm-activation blocks, two residual) per model."""
    act = torch.tanh if binary else (lambda t: torch.nn.functional.leaky_relu(t, 0.2))

    def forward(p: dict[str, torch.Tensor], noise: torch.Tensor) -> torch.Tensor:
        def block(i: int, x: torch.Tensor) -> torch.Tensor:
            return act(layer_norm(linear(x, p[f"layer_{i}.0.weight"]), p[f"layer_{i}.1.weight"],
                                  p[f"layer_{i}.1.bias"]))

        noise = block(0, noise) + noise
        noise = block(1, noise) + noise
        return block(2, noise)

    return forward


@torch.no_grad()
def generate_detached(p: dict[str, torch.Tensor], noise: torch.Tensor, binary: bool) -> torch.Tensor:
    """:func:`generator_forward` without autograd, one model at a time: ``nn.Linear`` and ``nn.LayerNorm``
    with the model's own weights (as the plain path's modules compute them), in place where the plain
    path's result is a temporary. Model by model keeps a model's rows in cache."""
    layer_norm_ = torch.nn.functional.layer_norm
    outs = []
    for j in range(noise.shape[0]):
        h = noise[j]
        for i in range(3):
            y = torch.mm(h, p[f"layer_{i}.0.weight"][j].t())
            y = layer_norm_(y, y.shape[-1:], p[f"layer_{i}.1.weight"][j], p[f"layer_{i}.1.bias"][j], 1e-5)
            y = y.tanh_() if binary else torch.nn.functional.leaky_relu_(y, 0.2)
            h = y.add_(h) if i < 2 else y
        outs.append(h)
    return torch.stack(outs)


def discriminator_forward(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """``Discriminator.forward`` (Linear, LeakyReLU(0.2), Linear, LeakyReLU(0.2), Linear, Sigmoid) per model."""
    leaky = torch.nn.functional.leaky_relu
    h = leaky(linear(x, p["model.0.weight"], p["model.0.bias"]), 0.2)
    h = leaky(linear(h, p["model.2.weight"], p["model.2.bias"]), 0.2)
    return torch.sigmoid(linear(h, p["model.4.weight"], p["model.4.bias"]))


def _batch(name: str, fixed: bool, data: np.ndarray, seeds: list[int], rows: int, epsilon: float,
           delta: float | None, hyperparams: dict[str, Any]) -> list[np.ndarray]:
    params = merge_hyperparams(name, DEFAULTS, hyperparams)
    k_given = params["num_teachers"]
    x, _ = as_numeric_array(data, min_rows=1 if k_given is None else int(k_given))
    bounds = public_bounds(params["bounds"], x.shape[1])
    if bounds is None or (params["preprocessor_eps"] or 0) > 0:
        raise ValueError(f"{name} fast path: needs public bounds and no preprocessor budget (DP bounds are "
                         "estimated on the plain path only)")
    ints = integer_columns(data, x, params["integer_columns"])
    pategan, utils = _modules(fixed)
    latent, batch = int(params["latent_dim"]), int(params["batch_size"])
    binary = bool(params["binary"])
    teacher_iters, student_iters = int(params["teacher_iters"]), int(params["student_iters"])
    lamda = 1e-3 if params["lamda"] is None else float(params["lamda"])
    num_moments, lr = int(params["num_moments"]), float(params["lr"])
    max_iterations = int(params["max_iterations"])
    transformer = pategan.MinMaxTransformer(bounds, 0.0, ints).fit(x)
    scaled = transformer.transform(x)
    d = scaled.shape[1]
    k = max(1, int(len(scaled) / 1000) if k_given is None else int(k_given))
    if delta is None:
        delta = 1 / (scaled.shape[0] * np.sqrt(scaled.shape[0]))
    # teacher i's partition, padded to the largest; a batch is the first min(size, batch) rows of a shuffle
    sizes = [len(p) for p in np.array_split(np.arange(len(scaled)), k)]
    taken = [min(s, batch) for s in sizes]
    parts = torch.zeros(k, max(sizes), d, dtype=torch.float64)
    for i, part in enumerate(np.array_split(np.arange(len(scaled)), k)):
        parts[i, : len(part)] = torch.from_numpy(scaled[part].astype("double"))

    def build() -> tuple[Any, Any, list[Any]]:
        g = pategan.Generator(latent, d, binary=binary).double()
        s = pategan.Discriminator(d).double()
        return g, s, [pategan.Discriminator(d).double() for _ in range(k)]

    K = len(seeds)
    built, gens = zip(*(replay(int(s), build) for s in seeds))
    rngs = [np.random.RandomState(int(s) % 2**32) for s in seeds]
    G = Stacked([b[0] for b in built], generator_forward(binary))
    S = Stacked([b[1] for b in built], discriminator_forward)
    T = Stacked([b[2][i] for i in range(k) for b in built], discriminator_forward)  # teacher i of model j: i*K + j
    opt_g = torch.optim.Adam(G.parameters(), lr=lr)
    opt_s = torch.optim.Adam(S.parameters(), lr=lr)
    opt_t = torch.optim.Adam(T.parameters(), lr=lr)
    l_list = 1 + torch.tensor(range(num_moments))
    accountant = VoteTable(utils.moments_acc, k, lamda, l_list)
    alphas = torch.zeros(K, num_moments, dtype=torch.float64)
    eps = [0.0] * K
    its = [0] * K
    active = [True] * K
    snaps: list[dict[str, torch.Tensor] | None] = [None] * K

    # one iteration's draws per model, in the plain path's order: (randperm, rand) per teacher step
    # and teacher, then one rand per student step, then the generator step's
    fakes_per_iter = teacher_iters * k + student_iters
    latents = torch.zeros(K, fakes_per_iter + 1, batch, latent)
    picks = torch.zeros(teacher_iters, k, K, max(taken), dtype=torch.int64)
    # per-row weights of a teacher's loss: mean over its real rows plus mean over its fake rows
    weights = torch.zeros(k, 1, max(taken) + batch, dtype=torch.float64)
    for i, r in enumerate(taken):
        weights[i, 0, :r] = 1.0 / r
    weights[:, :, max(taken):] = 1.0 / batch
    weights = weights.expand(k, K, -1).reshape(k * K, -1)
    targets = torch.zeros(k * K, max(taken) + batch, dtype=torch.float64)
    targets[:, : max(taken)] = 1.0
    teacher_of = torch.arange(k).view(k, 1, 1)
    ones = torch.ones(K, batch, dtype=torch.float64)

    with single_threaded():
        while True:
            now = torch.min((alphas - math.log(delta)) / l_list, dim=1).values.tolist()
            for j in range(K):  # the top of upstream's loop, per model
                if not active[j]:
                    continue
                if not (eps[j] < epsilon and its[j] < max_iterations):
                    active[j], snaps[j] = False, G.snapshot(j)
                    continue
                its[j] += 1
                eps[j] = now[j]
                if eps[j] > epsilon:
                    if its[j] == 1:
                        raise ValueError("Inputted epsilon parameter is too small to create a private dataset. "
                                         "Try increasing epsilon and rerunning.")
                    active[j], snaps[j] = False, G.snapshot(j)
            if not any(active):
                break
            noise = np.zeros((K, student_iters * batch))
            for j in range(K):
                if not active[j]:
                    continue
                g = gens[j]
                for t in range(teacher_iters):
                    for i in range(k):
                        picks[t, i, j, : taken[i]] = torch.randperm(sizes[i], generator=g)[: taken[i]]
                        torch.rand(batch, latent, generator=g, out=latents[j, t * k + i])
                # the student and generator steps' draws follow each other: one call, the same stream
                torch.rand((student_iters + 1) * batch, latent, generator=g,
                           out=latents[j, teacher_iters * k:].view(-1, latent))
                noise[j] = rngs[j].laplace(loc=0, scale=1 / lamda, size=student_iters * batch)
            fakes = generate_detached(G.params, latents[:, :fakes_per_iter].reshape(K, -1, latent).double(),
                                      binary).view(K, fakes_per_iter, batch, d)

            for t in range(teacher_iters):
                real = parts[teacher_of, picks[t]]  # [k, K, max(taken), d]
                fake = fakes[:, t * k:(t + 1) * k].transpose(0, 1)  # [k, K, batch, d]
                both = torch.cat([real, fake], dim=2).reshape(k * K, -1, d)
                out = T(both).squeeze(-1)
                loss = torch.nn.functional.binary_cross_entropy(out, targets, reduction="none")
                T.zero_grad()
                (loss * weights).sum().backward()
                opt_t.step()

            student_fakes = fakes[:, teacher_iters * k:]  # [K, student_iters, batch, d]
            with torch.no_grad():
                seen = student_fakes.reshape(1, K, -1, d).expand(k, -1, -1, -1).reshape(k * K, -1, d)
                votes = (T(seen) > 0.5).squeeze(-1).view(k, K, student_iters, batch).sum(dim=0)
            labels = ((votes.to(torch.float64) + torch.from_numpy(noise).view(K, student_iters, batch)) > k / 2
                      ).to(torch.float64)
            increments = accountant.increments(votes)  # [K, student_iters, L]
            for s in range(student_iters):
                alphas = alphas + increments[:, s]
                output = S(student_fakes[:, s])
                S.zero_grad()
                bce(output.squeeze(-1), labels[:, s]).sum().backward()
                opt_s.step()

            gen_data = G(latents[:, fakes_per_iter].double())
            out_g = S(gen_data)
            G.zero_grad()
            bce(out_g.squeeze(-1), ones).sum().backward()
            opt_g.step()

        for j in range(K):
            G.restore(j, snaps[j])
        # generate(rows) after the adapter's torch.manual_seed(seed * 7919 + 1)
        steps = rows // batch + 1
        draw = torch.rand if fixed else torch.randn
        latent_rows = torch.stack([_latents(draw, int(s), steps, batch, latent) for s in seeds])
        out = generate_detached(G.params, latent_rows.double(), binary).numpy()
    return [np.asarray(transformer.inverse_transform(o[:rows].copy()), dtype=np.float64) for o in out]


def _latents(draw: Any, seed: int, steps: int, batch: int, latent: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed * 7919 + 1)
    return torch.cat([draw(batch, latent, generator=generator) for _ in range(steps)])


def fit_sample_batch(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     **hyperparams: Any) -> list[np.ndarray]:
    """``smartnoise``: one released dataset per seed."""
    return _batch("smartnoise", False, data, seeds, rows, epsilon, delta, hyperparams)


def fit_sample_batch_fixed(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                           **hyperparams: Any) -> list[np.ndarray]:
    """``smartnoise-fixed``: one released dataset per seed."""
    return _batch("smartnoise-fixed", True, data, seeds, rows, epsilon, delta, hyperparams)
