"""Dagster layer of the article search: parsed_articles -> search_index."""
