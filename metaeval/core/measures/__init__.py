"""Distance measures sigma(a, b) in [0, 1], smaller = closer (docs/conventions.md sec. 3)."""
