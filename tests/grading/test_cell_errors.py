"""The "Hint:" line under an error raised in a learner's own cell (grading/cell_errors.py)."""

from __future__ import annotations

import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell

from attnlab.grading.cell_errors import explain, explain_errors


def _error(code: str) -> BaseException:
    with pytest.raises(Exception) as info:
        exec(code, {"torch": torch})
    return info.value


@pytest.mark.parametrize(
    "code", ["0.9 ^ 20", "20 ^ 0.9", "a = 0.9\na ^= 2", "torch.tensor(0.9) ^ 20"]
)
def test_a_caret_between_floats_is_named_as_xor_not_a_power(code):
    hint = explain(_error(code))
    assert hint is not None and "XOR" in hint and "`**`" in hint


@pytest.mark.parametrize("code", ["1 + 'a'", "len(3)", "torch.ones(2) @ torch.ones(3)", "None ^ 2"])
def test_other_errors_get_no_hint(code):
    assert explain(_error(code)) is None


@pytest.fixture
def shell():
    shell = InteractiveShell.instance()
    shell.set_custom_exc((), None)
    yield shell
    shell.set_custom_exc((), None)
    # No shell left behind: later tests check what happens outside IPython (get_ipython()
    # is None there), which a lingering singleton would change.
    InteractiveShell.clear_instance()


def test_the_cell_still_fails_with_its_traceback_and_one_hint_line_under_it(shell, capsys):
    explain_errors(shell)
    result = shell.run_cell("answer = 0.9 ^ 20")
    out = capsys.readouterr().out
    assert isinstance(result.error_in_exec, TypeError)
    assert "Traceback" in out or "TypeError" in out
    assert "unsupported operand type(s) for ^" in out
    lines = out.rstrip().splitlines()
    assert lines[-1].startswith("Hint: ") and "XOR" in lines[-1]
    assert out.count("Hint: ") == 1
    assert out.index("unsupported operand") < out.index("Hint: ")


def test_an_unknown_error_looks_as_it_did_before(shell, capsys):
    shell.run_cell("len(3)")
    before = capsys.readouterr().out
    explain_errors(shell)
    result = shell.run_cell("len(3)")
    after = capsys.readouterr().out
    assert isinstance(result.error_in_exec, TypeError)
    assert "Hint: " not in after and "object of type 'int' has no len()" in after
    assert after.count("\n") == before.count("\n")


def test_another_custom_handler_is_left_in_place(shell):
    def theirs(self, etype, value, tb, tb_offset=None):
        return None

    shell.set_custom_exc((ValueError,), theirs)
    explain_errors(shell)
    assert shell.custom_exceptions == (ValueError,)


def test_outside_ipython_nothing_happens():
    assert explain_errors() is None  # no running IPython under pytest: a no-op, no error


def test_in_a_real_kernel_the_error_output_stays_and_the_hint_follows_it():
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "from attnlab.grading.cell_errors import explain_errors\nexplain_errors()"
        ),
        nbformat.v4.new_code_cell("answer = 0.9 ^ 20"),
    ]
    with pytest.raises(CellExecutionError):
        NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    assert nb.cells[0].outputs == []
    kinds = [(o.output_type, o.get("ename")) for o in nb.cells[1].outputs]
    assert kinds[0] == ("error", "TypeError"), kinds
    assert kinds[1][0] == "stream" and nb.cells[1].outputs[1].text.startswith("Hint: ")
    assert "XOR" in nb.cells[1].outputs[1].text and len(kinds) == 2
