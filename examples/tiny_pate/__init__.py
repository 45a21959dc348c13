"""A tiny PATE-style synthetic-data generator used as the worked "bring your own implementation"
example (see docs/byo.md). Plug it into dpcheck with ``--impl examples.tiny_pate.model:TinyPate``."""
from examples.tiny_pate.model import TinyPate, moments_increment

__all__ = ["TinyPate", "moments_increment"]
