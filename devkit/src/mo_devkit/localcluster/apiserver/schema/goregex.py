"""Schema ``pattern`` keywords are Go (RE2) regular expressions; run them with
Python's ``re`` after translating the few places where the two disagree.

The differences that change results: Go's ``$`` (without ``m``) matches only
at the very end, Python's also before a final newline; Go spells the absolute
end ``\\z``; Go has POSIX classes (``[[:alpha:]]``); and RE2 has no
look-around or back-references, so patterns using them are invalid there.
"""

from __future__ import annotations

import functools
import re

_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_NOT_RE2 = re.compile(r"\(\?(?:=|!|<=|<!)|\\[1-9]")


class PatternError(ValueError):
    """The pattern is not a valid RE2 expression."""


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    multiline = pattern.startswith("(?m") or "(?m)" in pattern
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            out.append("\\Z" if nxt == "z" and not in_class else ch + nxt)
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i):
                end = pattern.find(":]", i + 2)
                name = pattern[i + 2 : end] if end != -1 else ""
                if name in _POSIX:
                    out.append(_POSIX[name])
                    i = end + 2
                    continue
            if ch == "]":
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
            # A leading ] or ^] is a literal inside the class.
            if pattern.startswith("^]", i + 1):
                out.append("^]")
                i += 2
            elif pattern.startswith("]", i + 1):
                out.append("]")
                i += 1
        elif ch == "$" and not multiline:
            out.append("\\Z")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=512)
def compile_go(pattern: str) -> re.Pattern[str]:
    """Compile a Go regular expression; :class:`PatternError` if RE2 would refuse it."""
    if _NOT_RE2.search(pattern):
        raise PatternError(f"error parsing regexp: invalid or unsupported Perl syntax: `{pattern}`")
    try:
        return re.compile(_translate(pattern))
    except re.error as e:
        raise PatternError(f"error parsing regexp: {e}: `{pattern}`") from None
