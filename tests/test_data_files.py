"""attnlab.data_files: the shipped tables of results, read and written by one StoredTable."""

from __future__ import annotations

import dataclasses

import pytest

from attnlab import data_files
from attnlab.data_files import StoredTable
from attnlab.tasks import heads, recall

TABLES = {
    "recall curves": recall._CURVES,
    "recall seeds": recall._SEEDS,
    "head roles": heads._ROLES,
}


@pytest.mark.parametrize("table", TABLES.values(), ids=TABLES.keys())
def test_a_stored_table_round_trips(table: StoredTable, tmp_path) -> None:
    rows = table.rows()
    assert rows and not any(row.startswith(("#", "settings ")) for row in rows)
    table.write(tmp_path / table.file, rows)
    assert table.rows(tmp_path / table.file) == rows
    # The same bytes as the shipped file: its comments are the table's own.
    assert (tmp_path / table.file).read_text(encoding="utf-8") == data_files.read_text(table.file)


def test_the_default_file_is_written_where_it_is_read(tmp_path, monkeypatch) -> None:
    # write_head_roles() once wrote beside its own module, where nothing reads.
    monkeypatch.setattr(data_files.resources, "files", lambda package: tmp_path)
    table = dataclasses.replace(heads._ROLES, file="roles.txt")
    table.write(None, ["1 0 0.5 0.25 0.75"])
    assert (tmp_path / "roles.txt").exists()
    assert table.rows() == ["1 0 0.5 0.25 0.75"]


def test_a_table_of_other_settings_is_refused(tmp_path) -> None:
    table = StoredTable("t.txt", "toy results", {"n": 1}, "TOY", "write_toy", comments=("# toy",))
    table.write(tmp_path / "t.txt", ["a 1"])
    other = dataclasses.replace(table, settings={"n": 2})
    with pytest.raises(ValueError, match=r"computed with \{'n': 1\}, not TOY = \{'n': 2\}: "):
        other.rows(tmp_path / "t.txt")
    (tmp_path / "t.txt").write_text("# no settings\na 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="a table of toy results starts with a settings line"):
        table.rows(tmp_path / "t.txt")
