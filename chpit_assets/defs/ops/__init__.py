"""Operations: the jobs, the nightly schedule and the new-edition sensor (docs/scheduling.md)."""
