"""The package version, in a module of its own so that any layer (a store writing it into its
file) can read it without importing the friendly surface in ``agentrt/__init__.py``."""

__version__ = "0.1.0"
