"""Prefilters are regexes over raw source: none may backtrack exponentially. Long runs of
``#`` (section rulers), backslashes and blank space after a generator-like name once made the
DP401/DP403 prefilters run for minutes on a 500-line scikit-learn test file."""
from __future__ import annotations

import subprocess
import sys
import textwrap

ADVERSARIAL = [
    "x = generator\n" + "#" * 80 + "\n",
    "out = self.generator  " + "# " * 60 + "\n",
    "gen = model.gen" + " \\\n" * 40 + "#" * 40 + "\n",
    "z = torch.randn" + "#" * 80 + "\n",
    "def sample(self):\n    return self.G" + " " * 200 + "#" * 60 + "\n",
]

PROBE = textwrap.dedent(
    """
    import sys
    from dpcheck.analysis import generator as _dp34_util
    from dpcheck.rules import all_rules, dp403_latent_mismatch as dp403
    for src in {cases!r}:
        for rule in all_rules():
            rule.applies_to(src * 3)
        _dp34_util.gen_called_raw(src)
        for pattern in dp403._NORMAL_RAW + dp403._UNIFORM_RAW:
            pattern.search(src.replace("generator", "randn").replace("gen", "rand"))
    print("done")
    """
)


def test_every_prefilter_finishes_on_adversarial_text() -> None:
    # a hang, not a speed: a linear scan of these few kB takes milliseconds; the old pattern
    # needed ~2^80 steps on the first case
    out = subprocess.run([sys.executable, "-c", PROBE.format(cases=ADVERSARIAL)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "done"
