"""The corpus store: the pipeline's own tables (spec, "Data model") in one DuckDB file."""
