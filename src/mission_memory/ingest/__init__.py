"""Ingestion: turn canonical sources (git history, ADRs, documents, principle registries) into records."""
