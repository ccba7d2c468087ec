"""Dagster layer of the benchmark builder: act_changes -> eligible_changes -> bench_items -> core_split -> build_report."""
