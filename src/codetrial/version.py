"""The version of codetrial: what `codetrial.__version__` gives and every run's manifest
records."""

__version__ = "0.1.0"
