import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the local demo login once (an admin too) and print it; later runs only print it."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="demo")

    def handle(self, *args, username: str, **options) -> None:
        password_file = Path(settings.DATA_DIR) / "demo_password"
        user_model = get_user_model()
        user = user_model.objects.filter(username=username).first()
        if user is None or not password_file.exists():
            password = secrets.token_urlsafe(12)
            if user is None:
                user = user_model.objects.create_superuser(username=username, email="", password=password)
            else:
                user.set_password(password)
                user.save(update_fields=["password"])
            password_file.touch(mode=0o600, exist_ok=True)
            password_file.write_text(password + "\n", encoding="utf-8")
        password = password_file.read_text(encoding="utf-8").strip()
        self.stdout.write(f"Demo login: user '{username}', password '{password}' (also the admin at /admin/)")
