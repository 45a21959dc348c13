"""Audit attacks (layer 9 of docs/architecture.md): black-box featurizers and scorers, the attack
game, release and white-box attacks, the gradient canary, ``--attack auto``. Never imports a runner."""
