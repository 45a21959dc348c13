"""Path- and script-level scoping of DP110, DP305 and DP402: commented-out functions, baseline and
evaluation scripts."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.deadcode import commented_out_functions
from dpcheck.rule import run_rules
from dpcheck.rules.dp305_subsampling_assumed import SubsamplingAssumed
from dpcheck.rules.dp402_integer_truncation import IntegerTruncation

SCRIPT = '''
def helper(x):
    return x + 1
def train(x):
    return helper(x)
def main():
    """train(load())"""
    return serve()
if __name__ == "__main__":
    main()
'''


def test_function_called_only_in_a_string_is_dead_with_its_callees() -> None:
    assert commented_out_functions(cst.parse_module(SCRIPT), SCRIPT) == {"train", "helper"}


def test_a_live_call_keeps_the_function() -> None:
    live = SCRIPT.replace('    """train(load())"""\n', "    train(load())\n")
    assert commented_out_functions(cst.parse_module(live), live) == frozenset()


def test_a_module_without_main_guard_is_a_library() -> None:
    library = SCRIPT.split("if __name__")[0]
    assert commented_out_functions(cst.parse_module(library), library) == frozenset()


NEXT_BATCH = '''
from accountant import comp_eps
def main(mnist, sigma, delta, batch_size, noisy_step, steps):
    sample_rate = batch_size / 60000
    for i in range(steps):
        batch = mnist.train.next_batch(batch_size)
        noisy_step(batch, sigma)
    return comp_eps(32, sample_rate, sigma, steps, delta)
'''


def test_subsampling_reported_in_a_dp_script_but_not_in_its_named_baseline() -> None:
    assert run_rules(NEXT_BATCH, [SubsamplingAssumed], path="mnist_dpsgd.py")
    assert not run_rules(NEXT_BATCH, [SubsamplingAssumed], path="mnist_dpsgd_without_noise.py")


TRUNCATION = '''
import numpy as np
class DPGAN:
    def sample(self, n, epsilon):
        fake = self.generator(np.random.normal(size=(n, 8)))
        return fake.astype(int)
'''


def test_truncation_reported_in_the_generator_not_in_its_test_script() -> None:
    assert run_rules(TRUNCATION, [IntegerTruncation], path="dpgan.py")
    assert not run_rules(TRUNCATION, [IntegerTruncation], path="titanic_test.py")
