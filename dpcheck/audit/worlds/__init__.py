"""Audit worlds (layer 6 of docs/architecture.md): the neighbouring datasets D and D′."""
