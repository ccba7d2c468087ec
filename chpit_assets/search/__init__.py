"""Full-text search over every parsed edition (search_index, ch_search_articles)."""
