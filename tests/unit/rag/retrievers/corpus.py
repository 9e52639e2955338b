"""A small real corpus as the engine sees a knowledge base: chunks by document and position."""

from rag.documents.models import Chunk

PASSAGES = {
    1: [
        "The mitochondria is the powerhouse of the cell and produces ATP through respiration.",
        "Photosynthesis in chloroplasts turns sunlight, water and carbon dioxide into glucose.",
        "Ribosomes translate messenger RNA into proteins by joining amino acids.",
    ],
    2: [
        "Python is a programming language that emphasises readable code and batteries included.",
        "Rust guarantees memory safety without a garbage collector through ownership and borrowing.",
        "The Django web framework ships an ORM, an admin panel and a templating system.",
        "React renders user interfaces from components and re-renders them when state changes.",
    ],
    3: [
        "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.",
        "Machu Picchu is an Inca citadel in the Andes mountains of Peru.",
    ],
}


def corpus_chunks() -> dict[int, dict[int, Chunk]]:
    return {
        document: {
            position: Chunk(id=document * 100 + position, document_id=document, position=position, text=text)
            for position, text in enumerate(texts)
        }
        for document, texts in PASSAGES.items()
    }


def all_chunks() -> list[Chunk]:
    return [chunk for positions in corpus_chunks().values() for chunk in positions.values()]
