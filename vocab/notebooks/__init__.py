"""What the notebooks share: their parameters checked before any work (``params``) and their figures shown inline
and saved (``show``)."""

from vocab.notebooks.params import ParameterError, Setup, check

__all__ = ["ParameterError", "Setup", "check"]
