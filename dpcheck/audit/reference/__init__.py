"""Reference mechanisms (layer 7 of docs/architecture.md): built-in mechanisms with known privacy
that calibrate the audit, and their broken twins."""
