"""Clients of remote services shared by components (OpenAI-compatible APIs)."""
