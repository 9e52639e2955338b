from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from knowledge.services import knowledge_base_seed_demo
from pipelines.services import pipeline_seed_demo


class Command(BaseCommand):
    help = ("Give the demo user the demo knowledge base (Trellis's guide; adds only pages it lacks) and the "
            "default pipeline over it, so the chat answers at once.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="demo")

    def handle(self, *args, username: str, **options) -> None:
        owner = get_user_model().objects.filter(username=username).first()
        if owner is None:
            raise CommandError(f"no user named {username!r}; run ensure_demo_user first")
        knowledge_base, added = knowledge_base_seed_demo(owner=owner)
        if added:
            self.stdout.write(f"Demo knowledge base '{knowledge_base.name}': {added} page(s) queued; "
                              "the server ingests them as it starts")
        else:
            self.stdout.write(f"Demo knowledge base '{knowledge_base.name}' is up to date")
        pipeline = pipeline_seed_demo(owner=owner, knowledge_base=knowledge_base)
        if pipeline is not None:
            self.stdout.write(f"Demo pipeline '{pipeline.name}' over it: ask it on the Chat page")
