"""Fedlex: the catalog of acts and consolidations (live SPARQL or the shipped sample) and file download."""
