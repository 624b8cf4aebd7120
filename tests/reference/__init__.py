"""Independent models of the package's rules, written at card level in plain Python: the tests' oracle."""
