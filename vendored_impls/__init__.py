"""Runnable rebuilds of six public PATE-GAN implementations (bug for bug) and their corrected
twins. Each folder holds ``upstream.py`` (the buggy code shape), ``fixed.py`` (the twin),
``adapter.py`` (``Upstream`` / ``Fixed`` adapters) and ``PROVENANCE.md``."""
