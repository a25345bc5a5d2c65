"""One vocabulary, checked: the forms that notation.md rules out appear nowhere in the course.

notation.md gives every symbol one meaning and lists, under "Forms not to use", the forms
that mean the same thing in other texts (``W_Q`` for ``W^Q``, ``d_k`` for ``d``, ...) or
that give a letter a second meaning (``E`` for the model width, ``d`` for a distance).
Each of those forms is a :class:`Rule` here, and every rule is tried three ways:

- on its own example, which it must flag (a rule that flags nothing is no check), and on
  the right form, which it must leave alone;
- against notation.md, which must list its example, so the page and the test stay one list;
- on every Markdown cell of chapters/, solutions/ and exercises/, every .md page, and the
  shape comments of the notebooks' code (the ``# (B, T, D)`` vocabulary), outside code
  spans and code blocks, where code names such as ``W_q`` are the right spelling.

Findings in files whose editors have not fixed them yet are listed in :data:`KNOWN`, each
with the date it was recorded. The list can only shrink: a listed finding that no longer
occurs fails the test, so whoever fixes one deletes its line.

A second check reads the HTML ``<summary>`` lines of the folded answers: the website shows
them as HTML, where ``$...$`` is not typeset, so math there must be written in plain
characters (``√d``, not ``$\\sqrt{d}$``).

The figures' text is checked by tests/test_figure_text.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    p for d in ("chapters", "solutions", "exercises") for p in (ROOT / d).glob("*.ipynb")
)
PAGES = sorted(ROOT.glob("*.md"))


@dataclass(frozen=True)
class Rule:
    """A form notation.md rules out, ``id`` for short: ``pattern`` finds it, in ``where`` ("math": inside
    ``$...$``; "text": anywhere outside code; "shape": in a parenthesized shape, in the
    text or in a code comment). ``example`` is the form as notation.md shows it, ``good``
    the course's own spelling, which the rule must not flag."""

    id: str
    name: str
    pattern: str
    where: str
    example: str
    good: str

    def findall(self, text: str) -> list[str]:
        return [m.group(0) for m in re.finditer(self.pattern, text)]


_SUB = r"(?:_\{[^{}]*\}|_\w)"  # a subscript: _t, _{t-1}, _{hh}
_SUP = r"(?:\^\{[^{}]*\}|\^\w|\^\\top)"

RULES = [
    Rule(
        "W_Q",
        "a projection written W_Q (write W^Q)",
        r"\bW_\{?(?:\\(?:mathrm|text)\{)?[QKVOqkvo]\b",
        "text",
        "$W_Q$",
        "$W^Q$, $W_h^Q$ and the code name `W_q`",
    ),
    Rule(
        "d_k",
        "d_k, d_q or d_v for the head size (write d)",
        r"\bd_\{?(?:\\(?:mathrm|text)\{)?[kqv]\b",
        "text",
        "$d_k$",
        "$d$, $d_a$, $d_{ff}$",
    ),
    Rule(
        "d_model",
        "d_model or d_head (write D and d)",
        r"\bd_\{?(?:\\(?:mathrm|text)\{)?(?:model|head)\b",
        "math",
        "$d_{model}$",
        "$D$ and $d = D/H$",
    ),
    Rule(
        "h",
        "h for the number of heads or a hidden size (write H, d_a)",
        r"/\s*h\b|\\times\s*h\b|\bh\s*\\times|\bh\s*=\s*\d",
        "math",
        "$D/h$",
        r"$D/H$, $T \times S \times d_a$, $\mathrm{head}_h$",
    ),
    Rule(
        "E",
        "E for the model width (write D)",
        r"\((?:\s*(?:\d*[A-Za-z]|\d+)\s*,)*\s*\d*E\s*(?:,\s*(?:\d*[A-Za-z]|\d+)\s*)*\)",
        "shape",
        "(B, T, E)",
        "(B, T, D), (3D, D) and the embedding matrix $E$",
    ),
    Rule(
        "D_s",
        "D with a subscript, e.g. a diagonal matrix D_s (D is the model width: write Lambda_s)",
        r"(?<![\\\w])D_(?:\{[^{}]*\}|\w)",
        "math",
        r"$D_s = \mathrm{diag}(\tanh')$",
        r"$D$, $D/H$, $\Lambda_s = \mathrm{diag}(\tanh')$, $d_{ff}$, $W_h^O$",
    ),
    Rule(
        "distance d",
        "d for a distance (write Δ)",
        r"\bdistances? \$?d\$?(?![\w-])|\$d\$ (?:steps|tokens|positions) (?:apart|back|after|before)",
        "text",
        "distance $d$",
        r"distance $\Delta$; head size $d$",
    ),
    Rule(
        "p p^T",
        "a vector times its own transpose, p p^T: column vectors (rows: p^T p; a matrix: X X^T)",
        r"(?<![\\\w])([a-z])" + _SUB + r"?\s*(?:\\,\s*)?\1" + _SUB + r"?\^\\top",
        "math",
        r"$p p^\top$",
        r"$p^\top p$ and $x_i W^Q (W^K)^\top x_j^\top$",
    ),
    Rule(
        "v^T x",
        "a column vector: a transposed vector on the left, v^T x (write x v^T)",
        # a different factor follows: p^T p (an outer product of rows) is right
        r"(?<![\\\w])([a-z])" + _SUB + r"?\^\\top\s*(?:\\,\s*)?(?!\1\b)"
        r"(?=[A-Za-z(]|\\(?:tanh|exp|sigma|mathrm|operatorname|left|big|Big)\b)",
        "math",
        r"$v_a^\top \tanh(q W_a)$",
        r"$\tanh(q W_a)\, v_a^\top$, $q\, W k^\top$, $z E^\top$, $p^\top p$",
    ),
    Rule(
        "W x",
        "a column vector: a matrix applied on the left, W x (write x W)",
        r"(?<![\\\w])[WM]"
        + _SUB
        + r"?"
        + _SUP
        + r"?\s*(?:\\,|\\;|\s)\s*(?:PE\(|[a-z]"
        + _SUB
        + r"?(?![\w^({]))",
        "math",
        r"$M_k\, PE(p)$",
        r"$PE(p)\, M_k$, $x W^Q$, $q\, W k^\top$",
    ),
    Rule(
        "S, P",
        "S or P for the scores or the weights (write s_{ij}, A)",
        r"\bd[SP]\b|\bP\s*\\circ|(?<![\w\\])P\^\\top|\bS\s*=\s*Q|\\mathrm\{softmax\}\(S\)|\bP\s*=\s*\\mathrm\{softmax",
        "math",
        r"$dS = P \circ (dP - \delta)$",
        r"$A = \mathrm{softmax}(QK^\top/\sqrt{d})$ and $T \times S$",
    ),
    Rule(
        "M_ts",
        "M_ts for a mask entry (write M_ij: query i, key j)",
        r"\bM_\{?ts\}?",
        "math",
        "$M_{ts}$",
        "$M_{ij}$",
    ),
    Rule(
        "s position",
        "s for a position (s is a score: write j for a key, t for a position)",
        r"\bposition \$s\$|\\partial\s*x_s\b",
        "text",
        "position $s$",
        r"position $t$, key $j$, $\partial\,\mathrm{out}_i / \partial x_j$, score $s_{ij}$",
    ),
    Rule(
        "N",
        "N for the number of layers (write L)",
        r"\$N = \d+\$|\$N\$ (?:encoder|decoder|layers|blocks)",
        "text",
        "$N = 6$",
        "$L = 6$",
    ),
    Rule(
        "^T",
        "^T for the transpose (write ^\\top)",
        r"(?<![\w\\])[A-Za-z]" + _SUB + r"?\^T\b",
        "math",
        "$K^T$",
        r"$K^\top$ and $T^2$",
    ),
    Rule(
        "|V|",
        "|V| or V for the vocabulary size (write n_vocab)",
        r"\|V\||\bvocabulary(?: size)? \$V\$",
        "text",
        "$|V|$",
        r"$n_{\text{vocab}}$ and the values $V$",
    ),
]

# Findings in files whose editors are fixing them (issue 24), each with the date it was
# recorded: (file, rule id, the text found). Delete a line when its finding is gone; add
# none (fix the form instead).
KNOWN: dict[tuple[str, str, str], str] = {}


# -- reading the course --------------------------------------------------------------------

FENCE = re.compile(r"^(?P<f>`{3,}|~{3,}).*?^(?P=f)[ \t]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$", re.S)
COMMENT = re.compile(r"#(.*)$", re.M)


def prose(markdown: str) -> str:
    """``markdown`` without code blocks and code spans (where code names are right)."""
    return CODE_SPAN.sub(" ", FENCE.sub(" ", markdown))


def math_of(text: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in MATH.finditer(text)]


def sources(path: Path) -> list[tuple[str, str, str]]:
    """``(where, kind, text)`` for everything of ``path`` the rules read: prose and comments."""
    if path.suffix == ".md":
        return [("page", "markdown", path.read_text(encoding="utf-8"))]
    nb = nbformat.read(path, as_version=4)
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            found.append((f"cell {i}", "markdown", cell.source))
        elif cell.cell_type == "code":
            comments = "\n".join(m.group(1) for m in COMMENT.finditer(cell.source))
            found.append((f"cell {i}", "comment", comments))
    return found


def rule_findings(rule: Rule, kind: str, text: str) -> list[str]:
    if kind == "comment":
        return rule.findall(text) if rule.where == "shape" else []
    text = prose(text)
    if rule.where == "math":
        return [f for m in math_of(text) for f in rule.findall(m)]
    return rule.findall(text)


def findings(path: Path) -> list[tuple[str, str, str, str]]:
    """``(file, rule id, found text, where)`` for every forbidden form in ``path``."""
    name = str(path.relative_to(ROOT))
    return [
        (name, rule.id, found, where)
        for where, kind, text in sources(path)
        for rule in RULES
        for found in rule_findings(rule, kind, text)
    ]


# -- the rules themselves --------------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_each_rule_flags_its_example_and_not_the_right_form(rule):
    assert rule_findings(rule, "markdown", rule.example), f"{rule.name}: misses {rule.example}"
    assert not rule_findings(rule, "markdown", rule.good), f"{rule.name}: flags {rule.good}"


def test_code_is_not_prose():
    rule = RULES[0]  # W_Q
    assert rule_findings(rule, "markdown", "the code name `W_Q`, and\n```\nW_Q = 1\n```\n") == []
    assert rule_findings(rule, "markdown", "a raw W_Q in a sentence") == ["W_Q"]
    assert rule_findings(rule, "comment", "W_Q: who asks") == []  # code comments name code
    shape = RULES[4]  # E in a shape
    assert rule_findings(shape, "comment", " (B, T, E) -> (B, T, D)") == ["(B, T, E)"]


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_notation_page_lists_every_rule(rule):
    page = (ROOT / "notation.md").read_text(encoding="utf-8")
    # in the page's table a | is written \| (else it ends the cell)
    example = rule.example.replace("|", "\\|")
    assert f"`{example}`" in page, f"notation.md does not list {rule.example!r}"


# -- the course ------------------------------------------------------------------------------


def course_findings() -> set[tuple[str, str, str]]:
    return {f[:3] for path in NOTEBOOKS + PAGES for f in findings(path)}


def test_the_course_uses_one_vocabulary():
    where = {}
    for path in NOTEBOOKS + PAGES:
        for name, rule, found, cell in findings(path):
            where.setdefault((name, rule, found), []).append(cell)
    names = {rule.id: rule.name for rule in RULES}
    new = sorted(set(where) - set(KNOWN))
    assert not new, "forms notation.md rules out:\n" + "\n".join(
        f"  {name}, {', '.join(where[name, rule, found])}: {found!r} ({names[rule]})"
        for name, rule, found in new
    )


def test_known_findings_still_exist():
    gone = sorted(set(KNOWN) - course_findings())
    assert not gone, "fixed: delete these lines from KNOWN in tests/test_notation.py:\n" + (
        "\n".join(f"  {g} (recorded {KNOWN[g]})" for g in gone)
    )


def test_known_findings_are_dated_and_name_a_rule():
    ids = {rule.id for rule in RULES}
    for (path, rule, _found), recorded in KNOWN.items():
        assert rule in ids, f"{path}: no rule {rule!r}"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", recorded), f"{path}: {recorded!r} is no date"


def test_known_findings_are_outside_the_chapters_already_fixed():
    later = tuple(f"{d}/0{n}_" for d in ("solutions", "exercises") for n in "5678")
    fixed = ("chapters/", "intro.md", *later)
    assert not [k for k in KNOWN if k[0].startswith(fixed)]


def test_the_known_list_is_checked(tmp_path, monkeypatch):
    # a finding that is not listed fails; listing it is what lets it through
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("projections $W_Q$ and $E$ for the width")]
    nbformat.write(nb, tmp_path / "draft.ipynb")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)  # findings() names files from ROOT
    found = {f[:3] for f in findings(tmp_path / "draft.ipynb")}
    assert ("draft.ipynb", "W_Q", "W_Q") in found
    assert not found <= set(KNOWN)


SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_no_math_in_html_summaries(path):
    nb = nbformat.read(path, as_version=4)
    raw = [
        f"cell {i}: {s.strip()[:70]!r}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "markdown"
        for s in SUMMARY.findall(cell.source)
        if "$" in s
    ]
    assert not raw, f"{path.name}: math in <summary> is shown raw on the website: {raw}"
