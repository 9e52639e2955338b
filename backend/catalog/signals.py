from typing import Any


def sync_catalog_after_migrate(sender: Any, *, using: str = "default", plan: Any = None, **kwargs: Any) -> None:
    """Keep the catalog rows in step with the engine registry after every ``migrate``."""
    from .services import component_sync_all

    report = component_sync_all(using=using)
    if kwargs.get("verbosity", 1) >= 1:
        print(f"  Component catalog: {report}")
