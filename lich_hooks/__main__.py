"""`python -m lich_hooks` runs the same entry point as the `lich-hook` script."""

import sys

from lich_hooks.cli import main

sys.exit(main())
