"""Fixed seeds that decide an audit's data, below ``spec`` (whose generation hash records them) and ``datasets``."""
from __future__ import annotations

#: the audit paper's split of cervical: stratified 80/20 on Biopsy with seed 13 (686 training rows of 858)
CERVICAL_SPLIT_SEED = 13
