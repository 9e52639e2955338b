"""The demo knowledge base: Trellis's own guide, so a new user has something to ask about."""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile

from rag.core import ml

from ..models import KnowledgeBase
from .documents import document_delete, documents_upload
from .knowledge_bases import knowledge_base_create

DEMO_TEXTS = {
    "name": ml("Trellis guide", "Guía de Trellis", "Trellis 指南"),
    "description": ml("Trellis's own documentation in English, Spanish and Traditional Chinese.",
                      "La documentación de Trellis en inglés, español y chino tradicional.",
                      "Trellis 自己的說明文件，有英文、西班牙文與繁體中文版。"),
}
"""Shown in the reader's language (``common.i18n.seeded_text``) until the owner edits them."""
DEMO_NAME = DEMO_TEXTS["name"].get("en")


def demo_sources() -> list[Path]:
    """The README and every guide page, in English, Spanish and Traditional Chinese."""
    root = Path(settings.BASE_DIR)
    return [root / "README.md", *sorted((root / "docs" / "guide").glob("*.md"))]


def knowledge_base_seed_demo(*, owner: AbstractBaseUser) -> tuple[KnowledgeBase, int]:
    """Create (once) the demo knowledge base of ``owner`` and add the guide pages it lacks;
    returns it and how many documents were added. New documents start when the server does."""
    knowledge_base = KnowledgeBase.objects.filter(owner=owner, name=DEMO_NAME).first()
    if knowledge_base is None:
        knowledge_base = knowledge_base_create(
            owner=owner, name=DEMO_NAME, language=KnowledgeBase.Language.MULTILINGUAL,
            description=DEMO_TEXTS["description"].get("en"),
        )
        knowledge_base.translations = {field: text.to_dict() for field, text in DEMO_TEXTS.items()}
        knowledge_base.save(update_fields=["translations"])
    files = []
    root = Path(settings.BASE_DIR)
    for path in demo_sources():
        data = path.read_bytes()
        name = path.relative_to(root).as_posix().replace("/", " › ")
        # A page whose text changed replaces its old version instead of sitting beside it.
        for stale in knowledge_base.documents.filter(name=name).exclude(sha256=hashlib.sha256(data).hexdigest()):
            document_delete(document=stale)
        files.append(SimpleUploadedFile(name, data, content_type="text/markdown"))
    outcome = documents_upload(knowledge_base=knowledge_base, files=files, start=False)
    return knowledge_base, len(outcome.accepted)
