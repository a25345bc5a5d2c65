"""The statuses a check can report, in the order the check pipeline looks for them.

Taught in: every chapter's exercises (first in exercises/02_similarity.ipynb)
"""

PASSED = "passed"
NOT_ATTEMPTED = "not attempted"
EXCEPTION = "raised an exception"
WRONG_TYPE = "wrong type"
IN_PLACE = "modified its input"
WRONG_SHAPE = "wrong shape"
NOT_FINITE = "NaN or inf"
WRONG_VALUES = "wrong values"
NO_GRADIENT = "no gradient"  # right values, but cut from the autograd graph
WRONG_GRADIENT = "wrong gradient"  # right values, gradients that differ from the reference's
WRONG_ANSWER = "wrong answer"  # a prediction question answered wrongly
NOT_CHECKED = "not checked"  # in the score table: the check cell has not run yet
GRADER_ERROR = "grader error"
