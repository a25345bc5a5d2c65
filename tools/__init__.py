"""The course's tools: scripts run from the repository's root (``python tools/make_toc.py``),
and modules the tests import (``from tools import make_exercises``; pytest puts the root,
where ``conftest.py`` is, on the import path)."""
