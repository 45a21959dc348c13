"""The exact-shape gates (``dpcheck.analysis.astshapes``): each skips DP-dense code without the shape its
rule reports, and a file with the shape still gets the rule's finding through the whole engine, also
when the cheaper facts the old gates used (a ``noise`` word, a ``while`` loop, a generator call) say
nothing or point elsewhere."""
from __future__ import annotations

import ast

import pytest

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.rules import all_rules
from dpcheck.scan.engine import analyse_source, applicable

RULES = {r.id: r for r in all_rules()}


def admits(rule_id: str, source: str) -> bool:
    return RULES[rule_id].may_report(AstFacts(ast.parse(source), source))


def reported(rule_id: str, source: str) -> list[int]:
    rules = list(RULES.values())
    selected = [rules[i] for i in applicable(rules, source, "m.py", gate=True)]
    analysis = analyse_source(source, "m.py", selected, gate=True)
    return [f.line for f in analysis.findings if f.rule == rule_id]


# (rule, DP-dense code the gate skips, the same code with the reported shape: it must still report)
PAIRS = [
    # DP502: a loop and the word noise, but the clip is of the data, in another function than the draw
    ("DP502",
     "import numpy as np\ndef clip_data(x, c):\n    return np.clip(x, -c, c)\n"
     "def release(x, epsilon):\n    noise = [v for v in np.random.laplace(0, 1 / epsilon, len(x))]\n    return x + noise\n",
     "import numpy as np\ndef release(x, epsilon, s):\n    z = np.random.laplace(0, s, len(x))\n"
     "    z = np.clip(z, -3 * s, 3 * s)  # the draw is not named noise\n    return x + z\n"),
    # DP502: a one-sided comprehension over a list that is not named noise
    ("DP502",
     "import numpy as np\ndef counts(c, b, epsilon):\n    d = np.random.laplace(0, b, len(c)).tolist()  # noise\n"
     "    return [x if x > 1 else 1 for x in d]\n",
     "import numpy as np\ndef counts(c, b, epsilon):\n    d = np.random.laplace(0, b, len(c)).tolist()  # noise\n"
     "    d = [0 if x < 0 else x for x in d]\n    return [a + x for a, x in zip(c, d)]\n"),
    # DP509: a division and a power, but by a count and of a std
    ("DP509",
     "import numpy as np\ndef noisy(g, sigma, clip, n, epsilon):\n    s = sigma ** 2\n"
     "    return g + np.random.normal(0, clip * sigma, g.shape) / n\n",
     "import numpy as np\ndef noisy(g, sigma, clip, batch_size, epsilon):\n"
     "    return g + np.random.normal(0, clip * sigma, g.shape) / np.sqrt(batch_size)\n"),
    # DP509: a Laplace scale divided by a count that is not of dimensions, then by one that is
    ("DP509",
     "import numpy as np\ndef release(x, epsilon, sens, records):\n"
     "    return x + np.random.laplace(0, sens / (epsilon * len(records)), x.shape)\n",
     "import numpy as np\ndef release(x, epsilon, sens, dimensions):\n"
     "    return x + np.random.laplace(0, sens / (epsilon * len(dimensions)), x.shape)\n"),
    # DP504: a while loop and a modulo, neither on the budget
    ("DP504",
     "def train(model, loader, accountant, steps, delta, epsilon):\n    i = 0\n    while i < steps:\n"
     "        model.step(next(loader))\n        if i % 10 == 0:\n            print(i)\n        i += 1\n",
     "def train(model, loader, accountant, delta, target_epsilon):\n    epsilon = 0.0\n"
     "    while epsilon < target_epsilon:\n        model.train_step(next(loader))\n"
     "        epsilon = accountant.get_epsilon(delta)\n    return model\n"),
    # DP505: an engine built per round, but ε is read from another object; then from the engine itself
    ("DP505",
     "from opacus import PrivacyEngine\ndef run(model, rounds, accountant, delta):\n    for r in range(rounds):\n"
     "        engine = PrivacyEngine()\n        model, opt, dl = engine.make_private(module=model)\n"
     "        model.train_round(dl)\n        eps = accountant.get_epsilon(delta)\n    return eps\n",
     "from opacus import PrivacyEngine\ndef run(model, rounds, delta):\n    for r in range(rounds):\n"
     "        acct = PrivacyEngine()\n        model, opt, dl = acct.make_private(module=model)\n"
     "        model.train_round(dl)\n        eps = acct.get_epsilon(delta)\n    return eps\n"),
    # DP514: ε in a product that is not a scale (a budget split), then a scale that grows with ε
    ("DP514",
     "import numpy as np\ndef release(x, epsilon, sens):\n    share = epsilon * 0.5\n    scale = sens / share\n"
     "    return x + np.random.laplace(0, scale, x.shape)\n",
     "import numpy as np\ndef release(x, epsilon, sens):\n    share = epsilon * 0.5\n    scale = sens * epsilon\n"
     "    return x + np.random.laplace(0, scale, x.shape)\n"),
    # DP514: δ passed to a function whose parameter is δ, then to one whose parameter is ρ
    ("DP514",
     "import numpy as np\ndef scale(delta):\n    return np.sqrt(1 / delta)\n"
     "def measure(m, rho, delta):\n    return m + np.random.normal(0, scale(delta), m.shape)\n",
     "import numpy as np\ndef scale(rho):\n    return np.sqrt(1 / rho)\n"
     "def measure(m, rho, delta):\n    return m + np.random.normal(0, scale(delta), m.shape)\n"),
    # DP510: ε beside a loop over the columns, but split before it; then the whole ε in every pass
    ("DP510",
     "import numpy as np\ndef privatize(x, epsilon, bound, columns):\n    share = epsilon / len(columns)\n"
     "    return [x[c].mean() + np.random.laplace(0, bound / share) for c in columns]\n",
     "import numpy as np\ndef privatize(x, epsilon, bound, columns):\n    share = epsilon / len(columns)\n"
     "    return [x[c].mean() + np.random.laplace(0, bound / epsilon) for c in columns]\n"),
    # DP510: a mechanism built with the whole ε, used once; then in a loop over the marginals
    ("DP510",
     "def measure(data, marginals, epsilon):\n    mech = LaplaceMechanism(epsilon=epsilon)\n"
     "    return mech(sum(v for v in data.total()))\n",
     "def measure(data, marginals, epsilon):\n    mech = LaplaceMechanism(epsilon=epsilon)\n"
     "    return {m: release(data.project(m), mech) for m in marginals}\n"),
    # DP204: the data's range read in one function, the noise drawn in another; then in the same one
    ("DP204",
     "import numpy as np\ndef describe(data):\n    return max(data) - min(data)\n"
     "def release(values, epsilon):\n    return values + np.random.laplace(0, 1 / epsilon, len(values))\n",
     "import numpy as np\ndef release(data, epsilon):\n    span = max(data) - min(data)\n"
     "    return data + np.random.laplace(0, span / epsilon, len(data))\n"),
    # DP108: Laplace noise in a file that draws normal noise too (the old gate read "norm" in "normal"),
    # then Laplace noise scaled by an L2 bound
    ("DP108",
     "import numpy as np\ndef release(x, epsilon, sens):\n    z = np.random.normal(0, 1, x.shape)\n"
     "    return x + z + np.random.laplace(0, sens / epsilon, x.shape)\n",
     "import numpy as np\ndef release(x, epsilon, l2_sensitivity):\n    z = np.random.normal(0, 1, x.shape)\n"
     "    return x + z + np.random.laplace(0, l2_sensitivity / epsilon, x.shape)\n"),
    # DP512: exp(ε·u/Δ) computed for an accountant (nothing drawn), then sampled from
    ("DP512",
     "import numpy as np\ndef probabilities(scores, epsilon, sensitivity):\n"
     "    w = np.exp(epsilon * scores / sensitivity)\n    return w / w.sum()\n",
     "import numpy as np\ndef select(scores, epsilon, sensitivity):\n"
     "    w = np.exp(epsilon * scores / sensitivity)\n    return np.random.choice(len(w), p=w / w.sum())\n"),
    # DP307: a noised copy that is returned, then one that is only measured
    ("DP307",
     "import numpy as np\ndef perturb(params, epsilon, sensitivity):\n"
     "    noisy = params + np.random.laplace(0, sensitivity / epsilon, params.shape)\n    return noisy\n",
     "import numpy as np\ndef perturb(params, epsilon, sensitivity):\n"
     "    noisy = params + np.random.laplace(0, sensitivity / epsilon, params.shape)\n"
     "    print(np.linalg.norm(noisy))\n    return params\n"),
    # DP507: a seeded generator that only shuffles, then one that draws the noise
    ("DP507",
     "import numpy as np\ndef release(x, epsilon):\n    rng = np.random.RandomState(42)\n    rng.shuffle(x)\n"
     "    return x + np.random.laplace(0, 1 / epsilon, x.shape)\n",
     "import numpy as np\ndef release(x, epsilon):\n    rng = np.random.RandomState(42)\n    rng.shuffle(x)\n"
     "    return x + rng.laplace(0, 1 / epsilon, x.shape)\n"),
]


@pytest.mark.parametrize("rule_id,skipped,kept", PAIRS, ids=[f"{p[0]}-{i}" for i, p in enumerate(PAIRS)])
def test_gate_skips_code_without_the_shape_and_keeps_the_finding(rule_id: str, skipped: str, kept: str) -> None:
    assert RULES[rule_id].applies_to(skipped), "the text prefilter must admit it: the gate is what skips it"
    assert not admits(rule_id, skipped)
    assert reported(rule_id, skipped) == []
    assert admits(rule_id, kept)
    assert reported(rule_id, kept), f"{rule_id} no longer reports its shape through the engine"


def test_seeded_mechanism_generator_without_draws_passes_the_gate() -> None:
    # no ``rng.laplace`` anywhere: the gate keeps a mechanism's ``self.rng`` set in an ``__init__`` taking ε
    source = ("import numpy as np\nclass LaplaceMechanism:\n    def __init__(self, epsilon, seed=0):\n"
              "        self.rng = np.random.default_rng(seed)\n")
    assert admits("DP507", source)
    # a generator without a seed, in a class that takes no ε: nothing the rule reports
    assert not admits("DP507", source.replace("epsilon", "scale").replace("default_rng(seed)", "default_rng()"))
    # a seeded generator stored on ``self`` stays admitted without ε in the file: a subclass in a sibling module
    # may draw the calibrated noise from it (batch 69, B69-012)
    assert admits("DP507", source.replace("epsilon", "scale"))


def test_global_seed_from_an_assigned_name_passes_the_gate() -> None:
    source = ("import numpy as np\ndef run(rnd, cid, epsilon):\n    noise_seed = rnd * 1000 + cid\n"
              "    np.random.seed(noise_seed)\n    return np.random.laplace(0, 1 / epsilon)\n")
    assert admits("DP507", source)
    assert not admits("DP507", source.replace("np.random.seed", "model.seed"))


def test_budget_checked_every_k_steps_passes_the_gate() -> None:
    source = ("def train(model, steps, accountant, target):\n    for step in range(steps):\n        model.step()\n"
              "        if step % 50 == 0 and step > 0:\n            if accountant.get_epsilon(1e-5) > target:\n"
              "                break\n")
    assert admits("DP504", source)
    assert not admits("DP504", source.replace("% 50", "% 1"))


def test_functions_holding_names_every_enclosing_function() -> None:
    source = ("def outer():\n    def inner():\n        return np.random.laplace(0, 1)\n    return inner\n"
              "def other():\n    return 1\n")
    facts = AstFacts(ast.parse(source), source)
    draw = next(c for c in facts.calls if getattr(c.func, "attr", "") == "laplace")
    held = facts.functions_holding([draw])
    assert {f.name for f in facts.functions if id(f) in held} == {"outer", "inner"}
    assert facts.functions_holding([]) == set()
