#!/usr/bin/env python
"""Django's command-line utility for Trellis."""

import os
import sys


def main() -> None:
    # The apps and the engine are importable because the project is installed into the
    # virtualenv (pyproject.toml, `make run`): backend/ is its source root.
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
