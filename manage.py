#!/usr/bin/env python
"""Django's command-line utility for Trellis."""

import os
import sys
from pathlib import Path


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent / "backend"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as exc:
        # A configuration mistake is the user's to fix; a traceback only hides the message.
        sys.exit(f"Trellis is not configured correctly: {exc}")


if __name__ == "__main__":
    main()
