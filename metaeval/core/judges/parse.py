"""A judge's raw reply -> ``"A"``, ``"B"`` or None (invalid) (conventions sec. 20, item 4).

The rule, in order:

1. Take the first line that is not blank (None when there is none).
2. Drop Markdown emphasis and quotes (``*``, ``_``, `````, ``"``) and a leading label such as ``Answer:``,
   ``Final answer:``, ``Choice:``, ``Verdict:``, ``Winner:``, ``Better text:`` (case-insensitive).
3. The line must then start with the answer: ``A``/``B`` (either case), optionally as ``Text A``, ``Response A``,
   ``Option A``, ``(A)`` or ``[A]``, and be followed by the end of the line, by punctuation (``A.``, ``B:``,
   ``A) ...``, ``B - ...``), or, when written as ``Text A`` or ``(A)``, by a space and more words. A bare letter
   followed by a word (``A better one is B``) is not an answer: ``a`` is an English word.
4. The rest of the line must not name the other letter (``A or B``, ``A/B``, ``Text A, not Text B``): such
   replies are ambiguous, hence None. Anything else (empty, refusal, ``tie``, ``both``, ``neither``) is None.
"""
from __future__ import annotations

import re

__all__ = ["parse_answer"]

_DECORATION = re.compile(r"[*_`\"\u201c\u201d]")
_LABEL = re.compile(
    r"^(?:(?:my|the|final)\s+)*(?:answer|choice|verdict|decision|preference|winner|better(?:\s+text)?|output)"
    r"\s*(?:is\s*)?[:=\-]?\s*", re.IGNORECASE)
_ANSWER = re.compile(
    r"^(?:(?P<word>text|response|option)\s+)?(?P<open>[(\[])?\s*(?P<letter>[ab])(?:\s*(?P<close>[)\]]))?"
    r"(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_PUNCTUATION = re.compile(r"^\s*[.,:;!)\]\-\u2013\u2014]")


def _names(rest: str, letter: str) -> bool:
    """Whether ``rest`` names ``letter`` as an answer (upper case standalone, ``text b``, ``(b)``, or a
    standalone lower-case ``b``; a lower-case ``a`` is the English article)."""
    upper = letter.upper()
    if re.search(rf"(?<![\w']){upper}(?![\w'])", rest):
        return True
    if re.search(rf"(?i:\b(?:text|response|option)\s+{upper}\b|[(\[]\s*{upper}\s*[)\]])", rest):
        return True
    return upper == "B" and re.search(r"(?<![\w'])b(?![\w'])", rest) is not None


def parse_answer(raw: str | None) -> str | None:
    """``"A"``, ``"B"`` or None for a judge's raw reply, by the rule of the module docstring."""
    if not raw:
        return None
    line = next((text.strip() for text in raw.splitlines() if text.strip()), "")
    line = _DECORATION.sub("", line).strip()
    line = _LABEL.sub("", line, count=1).strip()
    match = _ANSWER.match(line)
    if not match:
        return None
    letter = match["letter"].upper()
    rest = match["rest"]
    if match["open"] and not match["close"]:
        return None
    if rest.strip() and not (match["close"] and not match["open"]):  # "B) because ..." is punctuated
        marked = bool(match["word"] or match["open"])
        if not (_PUNCTUATION.match(rest) or (marked and rest[:1].isspace())):
            return None
    if _names(rest, "B" if letter == "A" else "A"):
        return None
    return letter
