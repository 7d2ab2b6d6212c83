"""Numeric core: plain data in, plain results out. Must not import Django."""
