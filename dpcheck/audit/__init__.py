"""Black-box ε audits: shadow runs on neighbouring datasets, a membership attack, and an
empirical lower bound ε_emp on the privacy loss (Clopper–Pearson and Bayesian).

Modules: ``spec`` (what an audit is, per-run seeds), ``datasets`` (D and D′), ``mechanisms``
(reference adapters with known privacy), ``attacks`` (features + random forest), ``stats``
(ε_emp), ``store`` (SQLite of finished runs), ``executor`` (in-process, process pool, Dask),
``engine`` (the game), ``targets`` (vulnerable-record selection), ``report`` and ``progress``.
Their layers (core, worlds, reference mechanisms, attacks, runners) and what each may import:
docs/architecture.md.
"""
