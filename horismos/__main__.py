"""``python -m horismos`` and the ``horismos`` console script: the same program."""

from __future__ import annotations

import sys

from ._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
