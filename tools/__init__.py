"""The course's tools: the scripts that build and check it, and the book's Sphinx extension.

One way to import them: as ``tools.NAME``, with the repository's root on the import path,
never by file path or by editing ``sys.path``. Each user puts the root there once:

- the tests: ``pythonpath = ["."]`` in ``pyproject.toml`` (``from tools import make_exercises``);
- the book: ``_config.yml`` registers the extension as ``tools.attnlab_book`` under
  ``sphinx: local_extensions``, with the path ``.``;
- a tool that imports another (``figure_text``, ``attnlab_book``): run it as a module from
  the root, ``python -m tools.figure_text``. The others also run as scripts
  (``python tools/make_toc.py``), as the ``Makefile`` does.

``execute_notebooks`` holds the execution cache's rule, which the book's extension applies
too; it imports no other tool, so ``python tools/execute_notebooks.py PATH`` works as well.
"""
