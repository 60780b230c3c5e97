"""The student's regions of an exercise file, and the file as the grader builds it.

A skeleton hands out code with gaps: the student writes between ``// BEGIN YOUR CODE`` and
``// END YOUR CODE`` and nothing else is theirs (design.md section 2). The code around the
regions is part of the exercise: a given kernel, the synchronous baseline that lesson 04's
overlapped loop is compared with. So the grader does not build the file as submitted: it puts
the submission's regions, in order, into the file as it was handed out (``graded_text``).
What a student changed outside the regions is not graded (and is reported), and cannot change
what the tests compare against; only the ``#include`` lines a submission adds around its
regions are kept (the checks of what a submission may include and call still apply to them).

A region must also stand on its own: it may not open a comment, a string, a ``#if`` or a
bracket that a later region closes (which would swallow the given code between them), nor end
in a line continuation, nor hold a ``#pragma`` other than ``unroll`` (which reaches past it);
and a macro it defines is undefined after it (so that it cannot rename what the given code
after it calls). ``region_problems`` says what is wrong, in words a student can act on.
"""
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

BEGIN = re.compile(r"^[ \t]*//[ \t]*BEGIN YOUR CODE[ \t]*\r?$")
# An #include line: one a submission adds around its regions is kept (a header its code needs).
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(<[^<>\n]+>|"[^"\n]+")[ \t]*(//[^\n]*)?\r?$')
END = re.compile(r"^[ \t]*//[ \t]*END YOUR CODE[ \t]*\r?$")


class RegionError(Exception):
    """The file's regions cannot be graded: the message says why, for the student."""


@dataclass
class Region:
    first_line: int  # the line number (1-based) of the region's first line, after its BEGIN marker
    end_line: int    # the line number of its END marker
    text: str


@dataclass
class ExerciseFile:
    given: List[str]       # the code around the regions: one part more than regions, markers included
    regions: List[Region]


def parse(text: str) -> ExerciseFile:
    """Splits an exercise file at its markers. RegionError for a BEGIN without its END, or an
    END without its BEGIN."""
    given, regions = [""], []
    inside, start, body = False, 0, []
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if BEGIN.match(line.rstrip("\n")):
            if inside:
                raise RegionError("line %d: a second BEGIN YOUR CODE before the END of the one at line %d"
                                  % (number, start - 1))
            given[-1] += line
            inside, start, body = True, number + 1, []
        elif END.match(line.rstrip("\n")):
            if not inside:
                raise RegionError("line %d: END YOUR CODE without a BEGIN YOUR CODE before it" % number)
            regions.append(Region(start, number, "".join(body)))
            given.append(line)
            inside = False
        elif inside:
            body.append(line)
        else:
            given[-1] += line
    if inside:
        raise RegionError("line %d: BEGIN YOUR CODE without an END YOUR CODE after it" % (start - 1))
    return ExerciseFile(given, regions)


# ---- whether a region stands on its own ---------------------------------------------------------

_RAW_STRING = re.compile(r'(?:u8|[uUL])?R"([^()\\ \t\n]{0,16})\(')
_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(\w+)[ \t]*(\w*)")
_CLOSING = {")": "(", "]": "[", "}": "{"}


# C++'s alternative spellings of #, {, }, [ and ]: the compiler reads them as those tokens.
_DIGRAPHS = {"%:": "#", "<%": "{", "%>": "}", "<:": "[", ":>": "]"}


def _digraph_at(text: str, i: int) -> Optional[str]:
    """The digraph at ``i``, or None. ``<::`` is ``<`` then ``::`` (C++11), unless a third ``:``
    or a ``>`` follows, as the compiler reads it."""
    two = text[i:i + 2]
    if two not in _DIGRAPHS:
        return None
    if two == "<:" and text.startswith("<::", i) and not text.startswith(("<:::", "<::>"), i):
        return None
    return two


def region_problems(text: str) -> Tuple[Optional[str], List[str]]:
    """(why the region does not stand on its own, or None; the macros it defines).

    It must close every comment, string, raw string, ``#if`` and bracket it opens, and close
    no bracket or ``#endif`` that it did not open."""
    brackets: List[str] = []
    conditionals = 0
    defined: List[str] = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start:
            directive = _DIRECTIVE.match(text, i)
            if directive:
                end = _logical_line_end(text, i)
                name, argument = directive.group(1), directive.group(2)
                if name in ("if", "ifdef", "ifndef"):
                    conditionals += 1
                elif name == "endif":
                    conditionals -= 1
                    if conditionals < 0:
                        return "it closes a #if (#endif) that it did not open", defined
                elif name == "define" and argument:
                    defined.append(argument)
                elif name == "pragma" and argument not in ("unroll", "nounroll"):
                    # Other pragmas reach past the region (clang attribute push, floating-point
                    # contraction, optimisation): they would change the given code after it.
                    return "it has a #pragma %s, and only #pragma unroll may appear in your code" % argument, defined
                i = end
                continue
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t\r\\":
            i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                return "it opens a /* comment that it does not close", defined
            i = close + 2
        elif c == '"' or c == "'" or (c in "uULR" and _RAW_STRING.match(text, i)):
            raw = _RAW_STRING.match(text, i) if c != "'" else None
            if raw:
                close = text.find(")" + raw.group(1) + '"', raw.end())
                if close < 0:
                    return "it opens a raw string that it does not close", defined
                i = close + len(raw.group(1)) + 2
                continue
            close = _literal_end(text, i)
            if close < 0:
                return "it opens a %s literal that it does not close" % ("string" if c == '"' else "character"), defined
            i = close
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            i = _number_end(text, i)
        elif c.isalpha() or c == "_":
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
        else:
            digraph = _digraph_at(text, i)
            if digraph:
                return ("it writes %s as the digraph %s, which the region rules would not see; write %s"
                        % (_DIGRAPHS[digraph], digraph, _DIGRAPHS[digraph])), defined
            if c in "([{":
                brackets.append(c)
            elif c in _CLOSING:
                if not brackets or brackets[-1] != _CLOSING[c]:
                    return "it closes a '%s' that it did not open" % c, defined
                brackets.pop()
            i += 1
    if conditionals > 0:
        return "it opens a #if that it does not close", defined
    # A backslash at the end would join the line after the region (what the grader puts there,
    # such as the #undef of a macro the region defined) to the region's last line.
    if text.rstrip("\r\n").rstrip(" \t").endswith("\\"):
        return "its last line ends with a backslash, which would continue it past the region", defined
    if brackets:
        return "it opens a '%s' that it does not close" % brackets[-1], defined
    return None, defined


def _logical_line_end(text: str, i: int) -> int:
    """The end of the line at ``i``, continued lines (a backslash at the end) included."""
    while True:
        newline = text.find("\n", i)
        if newline < 0:
            return len(text)
        if text[newline - 1:newline] == "\\" or text[newline - 2:newline] == "\\\r":
            i = newline + 1
            continue
        return newline + 1


def _literal_end(text: str, i: int) -> int:
    """Past the quoted literal that starts at ``i``, or -1 when the line ends first."""
    quote = text[i]
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == "\n":
            return -1
        if text[j] == quote:
            return j + 1
        j += 1
    return -1


def _number_end(text: str, i: int) -> int:
    """Past the number that starts at ``i`` (digit separators ' and exponents included)."""
    j = i
    while j < len(text):
        c = text[j]
        if c.isalnum() or c in "._":
            j += 1
        elif c == "'" and j + 1 < len(text) and text[j + 1].isalnum():
            j += 1
        elif c in "+-" and text[j - 1] in "eEpP":
            j += 1
        else:
            break
    return j


# ---- the file as graded ---------------------------------------------------------------------------

def _without(text: str, lines: List[str]) -> str:
    """``text`` without its lines that are among ``lines`` (compared stripped)."""
    drop = set(lines)
    return "".join(line for line in text.splitlines(keepends=True) if line.strip() not in drop)


def _same_code(a: str, b: str) -> bool:
    """Equal but for line endings and trailing blanks."""
    def normal(s: str) -> List[str]:
        return [line.rstrip() for line in s.replace("\r\n", "\n").split("\n")]
    return normal(a) == normal(b)


@dataclass
class GradedFile:
    text: str              # what the grader builds
    ignored: List[int]     # lines of the submission outside the regions whose change was not taken


# The largest exercise file the grader reads: the course's are a few KB. Every check of a
# submission's text (in Python, outside the build's limits and the time budget) then ends quickly
# (a seventh red-team run made one take minutes with 300 KB of blank lines).
MAX_FILE_CHARS = 256 * 1024


def graded_text(submitted: str, handed_out: str) -> GradedFile:
    """The submission's regions put into the file as it was handed out. RegionError when the
    submission's markers do not match the handed-out file's, or a region does not stand on its
    own, or the file is larger than MAX_FILE_CHARS. Where the code around the regions is
    unchanged and no region defines a macro, the submission is returned as it is, byte for byte."""
    if len(submitted) > MAX_FILE_CHARS:
        raise RegionError("the file has %d characters; the grader reads exercise files of at most %d (the "
                          "course's are a few thousand)" % (len(submitted), MAX_FILE_CHARS))
    theirs, ours = parse(submitted), parse(handed_out)
    if len(theirs.regions) != len(ours.regions):
        raise RegionError("the file has %d BEGIN/END YOUR CODE regions where the exercise has %d: keep the "
                          "markers as they were handed out and write only between them"
                          % (len(theirs.regions), len(ours.regions)))
    undefine: List[List[str]] = []
    for k, region in enumerate(theirs.regions):
        why, macros = region_problems(region.text)
        if why:
            raise RegionError("the region at line %d does not stand on its own: %s" % (region.first_line, why))
        undefine.append(macros)
    original_includes = {line.strip() for part in ours.given for line in part.splitlines() if INCLUDE.match(line)}
    added_includes = [line.strip() for part in theirs.given for line in part.splitlines()
                      if INCLUDE.match(line) and line.strip() not in original_includes]
    changed = [k for k, (a, b) in enumerate(zip(theirs.given, ours.given))
               if not _same_code(_without(a, added_includes), b)]
    if not changed and not any(undefine):
        return GradedFile(submitted, [])
    ignored = [_first_changed_line(theirs, ours, k, added_includes) for k in changed]
    out = ["%s\n" % line for line in added_includes] + (["#line 1\n"] if added_includes else [])
    out.append(ours.given[0])
    for k, region in enumerate(theirs.regions):
        # Line numbers stay the submission's, so that the compiler's messages point at its lines.
        out.append("#line %d\n" % region.first_line)
        out.append(region.text if region.text.endswith("\n") or not region.text else region.text + "\n")
        out.extend("#undef %s\n" % name for name in undefine[k])
        out.append("#line %d\n" % region.end_line)
        out.append(ours.given[k + 1])
    return GradedFile("".join(out), ignored)


def _first_changed_line(theirs: ExerciseFile, ours: ExerciseFile, k: int, added_includes: List[str]) -> int:
    """The submission's line where its code around the regions (part ``k``) first differs from
    the handed-out file's, the #include lines it added aside."""
    start = 1 if k == 0 else theirs.regions[k - 1].end_line
    mine = [(start + offset, line) for offset, line in enumerate(theirs.given[k].replace("\r\n", "\n").split("\n"))
            if line.strip() not in added_includes]
    original = ours.given[k].replace("\r\n", "\n").split("\n")
    for (number, a), b in zip(mine, original):
        if a.rstrip() != b.rstrip():
            return number
    shorter = min(len(mine), len(original))
    return mine[shorter - 1][0] if shorter > 0 else start


def grading_notes(submitted: str, handed_out: Optional[str]) -> List[str]:
    """What the grader would say of a file's regions, for a student before they hand it in:
    a region it would refuse, or lines outside the regions it would leave out. Without the
    handed-out file (the student edition) only the regions themselves are checked."""
    try:
        if handed_out is None:
            for region in parse(submitted).regions:
                why, _ = region_problems(region.text)
                if why:
                    raise RegionError("the region at line %d does not stand on its own: %s" % (region.first_line, why))
            return []
        ignored = graded_text(submitted, handed_out).ignored
    except RegionError as exc:
        return ["%s; the grader would score this exercise 0" % exc]
    if not ignored:
        return []
    return ["changed outside BEGIN/END YOUR CODE (from line %s): the grader leaves that out and builds your "
            "regions into the file as it was handed out" % ", ".join(str(n) for n in ignored)]
