"""Prediction questions: the learner predicts a value before running the code, then checks it.

A question is answered by one assignment in the check cell::

    # Predict: the weight of "he" on itself when τ → 0 (a number).
    answer = 1.0
    check_he_limit(answer)

The answer is a number (compared with a tolerance), ``True``/``False``, or one of a fixed
set of words (``choices``, compared case-insensitively). Likely wrong answers carry their
own diagnosis; a right answer shows why it is right. Like a :class:`~.pipeline.Grader`, a
question never raises and records its result for the chapter's score.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from array_api_compat import is_torch_array

from .results import CheckResult, graded, make_result
from .status import NOT_ATTEMPTED, PASSED, WRONG_ANSWER, WRONG_TYPE

__all__ = ["Question"]


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def _kind(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if _is_number(x):
        return "number"
    if isinstance(x, str):
        return "choice"
    raise TypeError(f"an answer is a number, a bool or a str, got {type(x).__name__}")


def _fmt(x: Any) -> str:
    if isinstance(x, str):
        return repr(x)
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if float(x).is_integer() and abs(float(x)) >= 1e4:  # a count, every digit: 98,304
        return f"{int(float(x)):,}"
    return f"{float(x):.4g}"


def _fmt_given(x: Any, answer: Any) -> str:
    """A refused answer, printed with the digits that tell it from the right one's display.

    A whole number of 10,000 or more is printed in full, with thousands separators; another
    number with 4 significant digits, or more where 4 would print what the right answer's
    display prints (a refused 7.088e6 must not read like the right 7,087,872's "7.088e+06").
    """
    if not _is_number(x) or not _is_number(answer):
        return _fmt(x)
    value = float(x)
    if value.is_integer() and abs(value) >= 1e4:
        return f"{int(value):,}"
    shown = _fmt(answer)
    for digits in range(4, 17):
        text = f"{value:.{digits}g}"
        if text != shown:
            return text
    return repr(value)


def _number_and_word(text: str) -> tuple[int | float | None, str | None]:
    """A number written as text and the one word after it ("98304 parameters", "48 MiB"),
    or ``(None, None)``."""
    found = re.fullmatch(r"\s*(\S+)\s+([A-Za-z]+)\s*", text)
    if found is None:
        return None, None
    head = found[1]
    if not (_NUMBER_TEXT.fullmatch(head) or re.fullmatch(r"[+-]?\d+(\.\d+)?", head)):
        return None, None
    digits = head.replace(",", "").replace("_", "")
    return (float(digits) if "." in digits else int(digits)), found[2]


_NUMBER_TEXT = re.compile(r"[+-]?\d{1,3}((,\d{3})+|( \d{3})+|(_\d{3})+)(\.\d+)?")
"""A number written as text with thousands separators: "7,087,872", "7 087 872", "7_087_872"
(what a count is often written as). Refused like any number in quotes, with how Python
groups digits: every question takes a number as a number, never as text."""


def _decimals(x: float) -> int | None:
    """How many decimals ``x`` is written with (0.13 -> 2, 4.0 -> 0), up to 6; else None."""
    for digits in range(7):
        if abs(x - round(x, digits)) <= 1e-12 * max(1.0, abs(x)):
            return digits
    return None


def _rounded_from(given: float, wrong: float) -> bool:
    """Is ``given`` the value ``wrong`` written to fewer digits (at least 2 significant)?"""
    digits = _decimals(given)
    if digits is None or given == 0 or wrong == 0:
        return False
    significant = digits + math.floor(math.log10(abs(given))) + 1
    return significant >= 2 and abs(given - wrong) <= max(
        0.5 * 10.0**-digits + 1e-12, 1e-6 * abs(wrong)
    )


def _rounding_of(given: float, answer: float) -> bool:
    """Is ``given`` ``answer`` rounded (or cut) to fewer significant digits (2,362,000 or
    2.4e6 for 2,362,368)? A near miss that is no rounding (2,361,600, a bias vector short)
    is a counting mistake, not a rounded count."""
    if given == answer or given == 0:
        return False
    for digits in range(1, 16):
        scale = 10.0 ** (math.floor(math.log10(abs(answer))) + 1 - digits)
        if any(
            abs(given - f(answer / scale) * scale) <= 1e-9 * abs(answer)
            for f in (round, math.trunc)
        ):
            return True
    return False


@dataclass(frozen=True)
class Question:
    """A question whose answer is a value the code will confirm.

    Args:
        name: the exercise's name, used in messages and the score table.
        answer: the right answer: a number, a bool, or a str among ``choices``.
        explanation: why it is right, shown with a right answer.
        wrong: ``(value, diagnosis)`` pairs: likely wrong answers and what each reveals.
        hint: shown for a wrong answer not in ``wrong`` (never the answer itself).
        atol, rtol: the tolerance of a numerical answer: right when
            ``|given - answer| <= atol + rtol * |answer|``.
        choices: the allowed words of a str answer.
        near, near_hint: a numerical answer within ``near`` (relative) of the right one
            but outside the tolerance, and not a listed wrong answer, gets ``near_hint``
            (e.g. a rounded count where the question asks for the exact one).
        near_rounding: ``near_hint`` only for a near answer that is the right one rounded
            or cut to fewer digits (a hint that says "rounded" must not reach a count that
            is a bias vector short).
        aliases: ``(words or number, diagnosis)`` for a question with ``choices``: answers
            off the menu that still say something (``"grows quadratically"``, ``4``,
            ``"linear"``), each with what it reveals; matched as a whole answer or as a
            word of a short phrase, before the answer is refused as not a choice.
        synonyms: ``(word, choice)`` pairs: other words for a choice that mean it exactly
            (``("same", "equal")``), accepted as that choice, alone or in a short phrase
            (a right prediction is never refused for its wording).
        right_idea: those of ``aliases`` that say the right answer in other terms (the
            ratio ``2`` or ``"linear"`` for ``"doubles"``): refused as the wrong form, not
            as a wrong idea ("answer with one of the words").
        digits: the significant digits an answer rounded from the right one needs to
            count as right (0.67 for 0.665, not 0.7: one digit cannot tell the answer from
            its neighbours 0.6 and 0.8); a shorter rounding is refused with that reason.
        reason: for a number that no listed wrong answer explains, what it implies,
            reasoned from the number itself (a weight outside [0, 1] is no share; a spread
            of x means a variance of x²), without the answer; ``None`` when it says nothing.
        equivalent: ``(expression, reason)`` for each variant of the worked answer's
            expression (one number changed, see tests/grading/test_questions.py) that the
            tolerance accepts, with the reason that is right (it differs from the answer
            below the precision the question asks for); every other variant is refused.
        each: ``(count, item)`` for a number that each of ``count`` items shares (the
            weight each of a row's four keys gets): a list of ``count`` equal numbers is
            read as that one number; a list of different ones is told that every item gets
            the same value.
        not_finite_hint: the diagnosis of a NaN or infinite answer to a numerical question,
            when the belief behind it is known (where that value would come from, and why
            it does not here); by default, the answer is said to be finite.
        nan_hint: the same for a NaN answer only (where NaN would come from); an infinite
            answer then gets ``reason``'s diagnosis of it, else ``not_finite_hint``.

    Raises:
        ValueError: if the question is inconsistent (a str answer outside ``choices``, a
            ``wrong`` value of another kind than the answer, or one the tolerance accepts,
            or a tolerance as wide as half the gap to a listed wrong answer).
    """

    name: str
    answer: float | int | bool | str
    explanation: str = ""
    wrong: tuple[tuple[Any, str], ...] = ()
    hint: str = ""
    atol: float = 0.0
    rtol: float = 1e-9
    choices: tuple[str, ...] | None = None
    equivalent: tuple[tuple[str, str], ...] = ()
    near: float = 0.0
    near_hint: str = ""
    near_rounding: bool = False
    not_finite_hint: str = ""
    nan_hint: str = ""
    aliases: tuple[tuple[Any, str], ...] = ()
    synonyms: tuple[tuple[str, str], ...] = ()
    right_idea: tuple[Any, ...] = ()
    digits: int = 2
    reason: Callable[[float], str | None] | None = None
    each: tuple[int, str] | None = None

    def __post_init__(self) -> None:
        kind = _kind(self.answer)
        if kind == "choice":
            if not self.choices:
                raise ValueError(f"question {self.name!r}: a str answer needs `choices`")
            if self._normal(self.answer) not in {self._normal(c) for c in self.choices}:
                raise ValueError(
                    f"question {self.name!r}: the answer {self.answer!r} is not among the "
                    f"choices {self.choices}"
                )
        for word, choice in self.synonyms:
            if self._normal(choice) not in {self._normal(c) for c in self.choices or ()}:
                raise ValueError(
                    f"question {self.name!r}: synonym {word!r} stands for {choice!r}, which "
                    f"is not among the choices {self.choices}"
                )
        for value, _ in self.wrong:
            if _kind(value) != kind:
                raise ValueError(
                    f"question {self.name!r}: wrong answer {value!r} is not a {kind} "
                    f"like the answer {self.answer!r}"
                )
            if self._matches(value, self.answer):
                raise ValueError(f"question {self.name!r}: wrong answer {value!r} counts as right")
            if kind == "number":
                gap = abs(float(value) - float(self.answer))
                if self.atol + self.rtol * abs(float(self.answer)) >= gap / 2:
                    raise ValueError(
                        f"question {self.name!r}: the tolerance is not below half the gap "
                        f"({gap:.3g}) to the wrong answer {value!r}"
                    )

    @property
    def kind(self) -> str:
        """``"number"``, ``"bool"`` or ``"choice"``."""
        return _kind(self.answer)

    @staticmethod
    def _normal(word: str) -> str:
        """Case, spaces and the punctuation around a choice ignored: " b.", "(b)", "B"."""
        return " ".join(word.strip().strip("()[].:'\"").lower().split())

    def _matches(self, given: Any, target: Any) -> bool:
        kind = _kind(target)
        if kind == "number":
            tolerance = self.atol + self.rtol * abs(float(target))
            return abs(float(given) - float(target)) <= tolerance
        if kind == "bool":
            return bool(given) == bool(target)
        return self._normal(given) == self._normal(target)

    def _known_wrong(self, value: Any) -> str | None:
        """The diagnosis of the listed wrong answer closest to ``value``, if one matches.

        A number matches a listed wrong value within the question's tolerance, or when it
        is that value written to fewer digits (0.88 for 0.8808, 2.83 for sqrt(8)); of
        several, the closest wins (0.3366 is 103/306, not 1/3). A listed value smaller
        than the tolerance itself (0.047 when the answer, 48, is taken within 0.5) is
        matched within a tenth of itself: the tolerance would take in every small number,
        half of it or twice it too (a listed 0 keeps the whole tolerance: "about 0").
        """
        if self.kind != "number":
            for wrong, diagnosis in self.wrong:
                if self._matches(value, wrong):
                    return diagnosis
            return None
        given = float(value)

        def near(wrong: float) -> bool:
            if not self._matches(given, wrong):
                return False
            tolerance = self.atol + self.rtol * abs(wrong)
            small = 0 < abs(wrong) <= tolerance  # 0 itself stands for "about nothing"
            return not small or abs(given - wrong) <= 0.1 * abs(wrong)

        matches = [
            (abs(given - float(wrong)), diagnosis)
            for wrong, diagnosis in self.wrong
            if near(float(wrong)) or _rounded_from(given, float(wrong))
        ]
        return min(matches, key=lambda m: m[0])[1] if matches else None

    def _rounded_answer(self, given: Any) -> bool:
        """Is ``given`` the answer rounded to the decimals it is written with (0.7 for 0.665)?

        Only with at least one decimal, and only when no listed wrong answer rounds to the
        same value: a rounding that cannot tell the answer from a mistake is not accepted.
        """
        if self.kind != "number" or given == 0:
            return False
        digits = _decimals(float(given))
        if digits is None or digits < 1:
            return False
        half = 0.5 * 10.0**-digits + 1e-12
        # A tie is no rounding: 0.2 and 0.3 are both 0.05 from 0.25, and neither is 1/4.
        if abs(float(given) - float(self.answer)) >= half - 2e-12:
            return False
        return not any(abs(float(given) - float(w)) <= half for w, _ in self.wrong)

    def _too_few_digits(self, given: Any) -> str | None:
        """Why a rounding of the answer to fewer than ``digits`` significant digits is refused."""
        if not self._rounded_answer(given):
            return None
        digits = _decimals(float(given))
        significant = digits + math.floor(math.log10(abs(float(given)))) + 1
        if significant >= self.digits:
            return None
        words = {1: "one", 2: "two", 3: "three"}
        return (
            f"that is the right value rounded to {words.get(significant, significant)} "
            f"significant digit{'s' * (significant != 1)}, too coarse to tell it from its "
            f"neighbours: give {words.get(self.digits, self.digits)} significant digits"
        )

    def _number_clue(self, given: float) -> str | None:
        """What a number no listed wrong answer explains is, next to the right one.

        Read in this order: a percentage (100 times the answer), the reciprocal, one minus
        the answer, and an answer off by one unit in its last digit (rounded the wrong way,
        truncated, or given to too few digits). None of these gives the answer away.
        """
        answer = float(self.answer)
        if self._matches(given / 100, answer) and 0 < abs(answer) <= 1:
            return (
                "that looks like a percentage (100 times a fraction): the question asks for "
                "the fraction itself, a number between 0 and 1"
            )
        if given != 0 and answer != 0 and abs(answer) != 1 and self._matches(1 / given, answer):
            return (
                "that is the reciprocal (1 / x) of the value asked for: a count or a ratio "
                "where the question asks for a fraction, or the other way round"
            )
        rest = 1 - answer  # a rest below the tolerance is matched within a tenth of itself,
        small = 0 < rest <= self.atol + self.rtol * rest  # as _known_wrong matches small values
        near_rest = not small or abs(given - rest) <= 0.1 * rest
        if 0 < answer < 1 and self._matches(1 - given, answer) and near_rest:
            return (
                "that is 1 minus the value asked for: the other part (what is lost, or the "
                "other key's share) instead of the part the question asks about"
            )
        digits = _decimals(given)
        significant = (
            digits + math.floor(math.log10(abs(given))) + 1 if digits is not None and given else 0
        )
        # A slip in the last digit only, not a conceptual mistake (0 is not close to 0.665).
        if significant >= 2 and abs(given - answer) < 10.0**-digits * (1 - 1e-9):
            return (
                f"close, but not right to the {digits} decimal{'s' * (digits != 1)} you "
                "gave: work it out to one more digit, then round (not truncate)"
            )
        return None

    def _result(self, status: str, message: str, diagnosis: str | None = None, **kw: Any):
        return make_result(self.name, status, message, diagnosis, **kw)

    def check(self, answer: Any) -> CheckResult:
        """Check ``answer``, record the result for the score, and return it. Never raises."""
        return graded(self.name, self._check, answer)

    def _as_value(self, given: Any) -> tuple[Any, str | None, str | None]:
        """``given`` as a value of the question's kind, or ``(None, problem, hint)``."""
        if is_torch_array(given) or isinstance(given, np.ndarray):
            if self.each is not None and tuple(given.shape) == (self.each[0],):
                given = given.tolist()  # np.full(4, 0.25): read as the list [0.25] * 4
            elif tuple(given.shape) != ():
                return None, f"got an array of shape {tuple(given.shape)}", "answer one value"
            else:
                given = given.item()
        if isinstance(given, np.generic):
            given = given.item()
        kind = self.kind
        if kind == "number":
            if _is_number(given):
                if not math.isfinite(float(given)):
                    nan = math.isnan(float(given))
                    # NaN's story (`nan_hint`) is for NaN only; an infinite answer without
                    # its own story gets the question's reason (an infinite weight is first
                    # of all no weight)
                    reason = None if nan or self.reason is None else self.reason(float(given))
                    hint = (
                        (self.nan_hint or self.not_finite_hint)
                        if nan
                        else (self.not_finite_hint or reason)
                    ) or f"the answer is a finite number, not {'NaN' if nan else 'infinite'}"
                    return None, f"got {given}", hint
                return given, None, None
            hint = "write the number without quotes" if isinstance(given, str) else None
            if isinstance(given, str) and not re.search(r"\d", given):
                # a word, not a quoted number: there is nothing to unquote
                hint = (
                    f"the question asks for a number, and {given.strip()!r} is a word: which "
                    "number does it stand for? Write that number, without quotes"
                )
            if isinstance(given, str) and _NUMBER_TEXT.fullmatch(given.strip()):
                digits = re.sub(r"[, ]", "_", given.strip())
                hint = (
                    "write the number without quotes: in quotes it is text, not a number. "
                    f"Python groups digits with underscores, {digits}, not commas"
                )
            elif isinstance(given, str):
                # One policy for every question: the answer is a Python number, and text is
                # refused with how to write it, the unit word named ("98304 parameters").
                number, word = _number_and_word(given)
                if number is not None and word is not None:
                    hint += f", and without the word {word!r}: answer = 12345, a Python number"
            if isinstance(given, (list, tuple)):
                hint = "answer one number, not a list: the question asks for a single value"
                if self.each is not None and len(given) == self.each[0]:
                    values = [g.item() if isinstance(g, np.generic) else g for g in given]
                    if all(_is_number(v) and math.isfinite(float(v)) for v in values):
                        if max(values) - min(values) <= self.atol:
                            return values[0], None, None
                    count, item = self.each
                    hint = (
                        f"all {count} {item}s get the same value here, so the question asks "
                        f"for one number: your list gives the {item}s different values; "
                        "work out what makes them equal, then answer that one value"
                    )
            return None, f"expected a number, got {given!r}", hint
        if kind == "bool":
            if isinstance(given, bool):
                return given, None, None
            hint = "write True or False, without quotes" if isinstance(given, str) else None
            return None, f"expected True or False, got {given!r}", hint
        if not isinstance(given, str):
            return None, f"expected a word, got {given!r}", self._choices_text()
        if self._normal(given) not in {self._normal(c) for c in self.choices or ()}:
            found = self._choice_in_phrase(given)
            if found is None:
                return None, f"{given!r} is not one of the choices", self._choices_text()
            return found, None, None
        return given, None, None

    def _choice_in_phrase(self, given: str) -> str | None:
        """The one choice a short phrase names ("it doubles" -> "doubles"), if exactly one.

        A phrase of up to five words with no negation: "it does not double" names none.
        """
        words = re.findall(r"[a-z0-9']+", given.lower())
        if not words or len(words) > 5 or {"not", "no", "never"} & set(words):
            return None
        if any(w.endswith("n't") for w in words):
            return None
        text = " " + " ".join(words) + " "
        named = [
            c
            for c in self.choices or ()
            if f" {self._normal(c)} " in text
            or (self._normal(c).endswith("s") and f" {self._normal(c)[:-1]} " in text)
            or any(
                self._normal(choice) == self._normal(c) and f" {self._normal(word)} " in text
                for word, choice in self.synonyms
            )
        ]
        return named[0] if len(named) == 1 else None

    def _alias(self, given: Any, among: tuple[Any, ...] | None = None) -> str | None:
        """The diagnosis of an off-menu answer listed in ``aliases`` (a word of a phrase of
        up to five words counts), followed by the choices; ``among``: only those words."""
        aliases = self.aliases if among is None else [(a, "") for a in among]
        if _is_number(given) and not isinstance(given, bool):
            found = [d for a, d in aliases if _is_number(a) and float(a) == float(given)]
        elif isinstance(given, str):
            words = re.findall(r"[a-z0-9']+", given.lower())
            text = " " + " ".join(words) + " "
            if {"not", "no", "never"} & set(words) or any(w.endswith("n't") for w in words):
                return None
            found = [
                d
                for a, d in aliases
                if isinstance(a, str)
                and len(words) <= 5
                and (self._normal(given) == self._normal(a) or f" {self._normal(a)} " in text)
            ]
        else:
            found = []
        return f"{found[0]}; {self._choices_text()}" if found else None

    def _choices_text(self) -> str:
        return "answer one of: " + ", ".join(repr(c) for c in self.choices or ())

    def _check(self, given: Any) -> CheckResult:
        if given is Ellipsis or given is NotImplemented:
            return self._result(
                NOT_ATTEMPTED,
                "not attempted yet: replace the `...` with your prediction, then run this cell",
            )
        if given is None:
            return self._result(
                WRONG_TYPE, "the answer is None", "assign your prediction: answer = ..."
            )
        value, problem, hint = self._as_value(given)
        alias = self._alias(given) if problem is not None else None
        if alias is not None and self._alias(given, among=self.right_idea) is not None:
            return self._result(
                WRONG_TYPE,
                f"{_fmt(given)} is the right idea in another form: answer with one of the words",
                alias,
                diagnosed=True,
            )
        if alias is not None:
            return self._result(
                WRONG_ANSWER, f"{_fmt(given)} is not one of the choices", alias, diagnosed=True
            )
        if problem is not None:
            return self._result(WRONG_TYPE, problem, hint, diagnosed=hint is not None)
        coarse = self._too_few_digits(value) if self.kind == "number" else None
        if coarse is not None and not self._matches(value, self.answer):
            return self._result(
                WRONG_ANSWER,
                f"{_fmt_given(value, self.answer)} is not precise enough",
                coarse,
                diagnosed=True,
            )
        if self._matches(value, self.answer) or self._rounded_answer(value):
            return self._result(
                PASSED, f"right: {_fmt(value)}", explanation=self.explanation or None
            )
        shown = _fmt_given(value, self.answer)
        found = self._known_wrong(value)
        if found is None and self.kind == "number":
            found = self._number_clue(float(value))
        if found is None and self.near and self.kind == "number":
            close = abs(float(value) - float(self.answer)) <= self.near * abs(float(self.answer))
            if close and (not self.near_rounding or _rounding_of(float(value), float(self.answer))):
                found = self.near_hint
        if found is None and self.reason is not None and self.kind == "number":
            found = self.reason(float(value))
        if found is not None:
            return self._result(WRONG_ANSWER, f"{shown} is not right", found, diagnosed=True)
        return self._result(
            WRONG_ANSWER,
            f"{shown} is not right",
            self.hint or "not this: the hints under the question lead to the answer step by step",
        )
