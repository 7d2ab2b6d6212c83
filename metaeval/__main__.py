"""``python -m metaeval``: see :mod:`metaeval.cli`."""
import sys

from metaeval.cli import main

sys.exit(main())
