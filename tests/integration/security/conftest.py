"""The knowledge tests' fixtures (knowledge bases, no job outliving its test); users and clients
come from tests/integration/conftest.py."""

from ..knowledge.conftest import background_jobs_finish, create_knowledge_base  # noqa: F401
