"""Audit core (layer 5 of docs/architecture.md): what an audit is (spec, hashes, seeds), the run
store, the statistics (Clopper–Pearson, Bayes, GDP, certifiable ceiling), paper settings, progress,
worker processes, ``AuditRunError``, crafted-canary names and candidates, ``ReleasedModel``, ``--hp``
parsing. Imports nothing above the target protocol."""
