"""qlab's version: the one place it is written (``pyproject.toml`` reads it here; ``qlab.__version__`` is it)."""

from __future__ import annotations

__version__ = "0.1.0"
