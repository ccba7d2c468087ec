"""The Dagster layer: thin assets, checks, resources, schedules and sensors, one sub-package per domain.

Every module below is discovered by `chpit_assets.definitions`, so a domain adds
assets by adding `defs/<domain>/assets.py`, without touching a central list.
"""
