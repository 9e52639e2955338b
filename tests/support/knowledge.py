"""A small knowledge base of three topics, ingested for real, for tests that retrieve from one."""

from __future__ import annotations

from typing import Any

MIXED_DOCUMENTS = {
    "cells.txt": "The mitochondria produces ATP, the energy currency of the cell, through respiration.\n\n"
                 "Ribosomes translate messenger RNA into proteins.",
    "rust.txt": "Rust guarantees memory safety without a garbage collector through ownership and borrowing.\n\n"
                "Cargo is Rust's package manager and build tool.",
    "travel.txt": "Machu Picchu is an Inca citadel high in the Andes of Peru.\n\n"
                  "The Eiffel Tower in Paris was completed in 1889.",
}


def ingested_knowledge_base(owner: Any, documents: dict[str, str] = MIXED_DOCUMENTS, *, name: str = "Mixed",
                            chunker: dict[str, Any] | None = None) -> Any:
    """A knowledge base of ``documents`` (file name → text), every one ingested and ready."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    import jobs
    from knowledge.services import documents_upload, knowledge_base_create

    knowledge_base = knowledge_base_create(owner=owner, name=name, **({"chunker": chunker} if chunker else {}))
    documents_upload(knowledge_base=knowledge_base,
                     files=[SimpleUploadedFile(file, text.encode()) for file, text in documents.items()])
    assert jobs.wait_until_idle(180)
    knowledge_base.refresh_from_db()
    return knowledge_base
