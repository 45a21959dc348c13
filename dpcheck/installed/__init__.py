"""Property tests of *installed* accountant and noise-calibration functions, without probes.

``dpcheck test --accountant MODULE:FUNCTION`` / ``--noise MODULE:FUNCTION`` import a function from
an installed library (in this process, or in a target's own virtualenv through the worker of
:mod:`dpcheck.targets.remote`), call it through a declared signature mapping
(:mod:`dpcheck.installed.mapping`) on inputs Hypothesis draws, and compare what it returns with
the reference oracles of :mod:`dpcheck.reference` (:mod:`dpcheck.installed.properties`).

This package's :mod:`~dpcheck.installed.mapping` imports only the standard library and numpy: the
worker in a foreign env runs it to build the arguments and read the result.
"""
