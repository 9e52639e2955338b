"""Re-encrypt every stored credential with a new key."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError, CommandParser

from credentials import crypto, services
from rag.core import CredentialError


class Command(BaseCommand):
    help = (
        "Re-encrypt every stored credential with a new key (make one with "
        "`python -c \"from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())\"`). "
        "The current TRELLIS_CREDENTIALS_KEY (and TRELLIS_CREDENTIALS_OLD_KEYS) must still open them. "
        "When the key lives in the data directory's credentials.key, the new key is written there."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--new-key", required=True, help="The new Fernet key (urlsafe base64 of 32 bytes). Write --new-key=KEY: a key may start with a dash.")

    def handle(self, *args: Any, new_key: str, **options: Any) -> None:
        try:
            count = services.credentials_rotate_key(new_key=new_key)
        except (ImproperlyConfigured, CredentialError) as exc:
            raise CommandError(f"{exc}. Nothing was changed.") from None
        fingerprint = crypto.key_fingerprint(new_key)
        self.stdout.write(self.style.SUCCESS(f"Re-encrypted {count} credential(s) with the key {fingerprint}."))
        key_file: Path | None = getattr(settings, "TRELLIS_CREDENTIALS_KEY_FILE", None)
        if key_file is not None:
            _write_private(Path(key_file), new_key.strip() + "\n")
            first = f"Done: the new key replaced the old one in {key_file} (mode 0600)."
        else:
            first = (f"Set TRELLIS_CREDENTIALS_KEY to the new key (the value given to --new-key; "
                     f"fingerprint {fingerprint}).")
        self.stdout.write("Next:")
        self.stdout.write(f"  1. {first}")
        self.stdout.write("  2. Unset TRELLIS_CREDENTIALS_OLD_KEYS: no stored credential needs an old key now.")
        self.stdout.write("  3. Restart every Trellis process (server and workers); until then they cannot "
                          "read the credentials.")


def _write_private(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.new")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    os.replace(temporary, path)
