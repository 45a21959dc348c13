"""Audit runners (layer 10 of docs/architecture.md): executing shadow runs, the audit loop, target and
canary selection, hyperparameter search, one-run audits, calibration, reports."""
