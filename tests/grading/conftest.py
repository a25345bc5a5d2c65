"""Shared by every grading test: each test starts and ends with no recorded result."""

from __future__ import annotations

import pytest

from attnlab import grading


@pytest.fixture(autouse=True)
def _fresh_results():
    grading.reset()
    yield
    grading.reset()
