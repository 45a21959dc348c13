"""The scan engine: file discovery, configuration, result cache and baseline, rule execution."""
