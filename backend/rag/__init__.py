"""Trellis's retrieval engine: components, documents, retrievers, LLMs and strategies.

Plain Python with no Django import, usable and testable on its own.
"""
