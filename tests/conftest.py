"""Hypothesis profiles for the whole test suite: ``ci`` (derandomised, 50 examples, no deadline)
when ``$CI`` is set, else ``dev``; ``$HYPOTHESIS_PROFILE`` overrides either."""
from dpcheck.testing import register_hypothesis_profiles

register_hypothesis_profiles()
