"""Typed errors of a release: each names the file (relative to the release folder) it is about."""

from __future__ import annotations


class ReleaseError(ValueError):
    """A release that is missing, partial, tampered with or inconsistent; `file` names the file."""

    def __init__(self, file: str, problem: str):
        super().__init__(f"{file}: {problem}")
        self.file = file
        self.problem = problem
