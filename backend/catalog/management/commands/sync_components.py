from django.core.management.base import BaseCommand

from catalog.services import component_sync_all


class Command(BaseCommand):
    help = "Bring the component catalog in step with the engine registry (also runs after migrate)."

    def handle(self, *args, **options) -> None:
        report = component_sync_all()
        self.stdout.write(self.style.SUCCESS(f"Component catalog: {report}"))
