"""Distance measures sigma(a, b) in [0, 1], smaller = closer (PERSEVAL_CONVENTIONS.md sec. 3)."""
