"""qlab (Quality Lab): staged quality gates for API collections and the skills built on them."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
