"""`python -m claude_print.needle adapters-dir`: where NEEDLE reads adapters (install.sh)."""

import sys

from claude_print.needle.view import main

sys.exit(main(sys.argv))
