"""Reference implementations the tests and benchmarks compare the platform with (not shipped)."""
