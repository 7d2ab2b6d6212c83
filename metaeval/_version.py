"""The package's version: one definition, read by pyproject.toml (setuptools), ``metaeval.__version__`` and
``metaeval --version``."""

__version__ = "0.30.0"
