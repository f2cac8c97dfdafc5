"""The package's version (one place: the root package, ``tracing`` and the CLI read it)."""

__version__ = "0.2.0.dev0"
