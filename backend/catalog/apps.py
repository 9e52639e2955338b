from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = _("Component catalog")

    def ready(self) -> None:
        from rag.components import load_components

        from .signals import sync_catalog_after_migrate

        load_components()
        post_migrate.connect(sync_catalog_after_migrate, sender=self)
