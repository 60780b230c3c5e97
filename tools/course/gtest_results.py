"""Read the results a GoogleTest binary writes with ``--gtest_output=json:FILE``.

Results come from that file only, never from the program's stdout (which the tested code
controls). A missing, empty or corrupt file is an error with a reason the student can read."""
import json
import os
from dataclasses import dataclass, field
from typing import List


class ResultsError(Exception):
    """The results file cannot be used; ``str(err)`` is the reason."""


@dataclass
class CaseResult:
    suite: str
    name: str
    passed: bool
    skipped: bool = False
    failures: List[str] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return self.suite + "." + self.name


@dataclass
class GTestResults:
    cases: List[CaseResult]

    @property
    def counted(self) -> List[CaseResult]:
        """The cases that count: run and not skipped (disabled ones never appear here)."""
        return [c for c in self.cases if not c.skipped]

    @property
    def total(self) -> int:
        return len(self.counted)

    @property
    def passed(self) -> int:
        return sum(1 for c in self.counted if c.passed)

    @property
    def skipped(self) -> int:
        return sum(1 for c in self.cases if c.skipped)

    @property
    def failed_cases(self) -> List[CaseResult]:
        return [c for c in self.counted if not c.passed]

    def failure_report(self, limit: int = 16 * 1024) -> str:
        """The failing cases with their messages, as GoogleTest phrased them."""
        parts = []
        for case in self.failed_cases:
            messages = "\n".join(m.rstrip() for m in case.failures) or "(failed without a message)"
            parts.append("%s FAILED\n%s" % (case.full_name, _indent(messages)))
        text = "\n\n".join(parts)
        if len(text) > limit:
            text = text[:limit] + "\n[... more failures cut ...]"
        return text


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else line for line in text.splitlines())


def parse_gtest_json(data: object) -> GTestResults:
    """GTestResults from the decoded JSON document (raises ResultsError on a wrong shape)."""
    if not isinstance(data, dict) or not isinstance(data.get("testsuites"), list):
        raise ResultsError("the test results file does not have GoogleTest's JSON layout")
    cases: List[CaseResult] = []
    for suite in data["testsuites"]:
        if not isinstance(suite, dict):
            raise ResultsError("the test results file has a malformed test suite entry")
        for case in suite.get("testsuite", []) or []:
            if not isinstance(case, dict):
                raise ResultsError("the test results file has a malformed test case entry")
            status = str(case.get("status", "RUN")).upper()
            if status == "NOTRUN":          # DISABLED_ tests and tests filtered out
                continue
            result = str(case.get("result", "COMPLETED")).upper()
            messages = []
            for failure in case.get("failures", []) or []:
                if isinstance(failure, dict):
                    messages.append(str(failure.get("failure", failure.get("message", ""))))
                else:
                    messages.append(str(failure))
            skipped = result == "SKIPPED" and not messages
            cases.append(CaseResult(suite=str(suite.get("name", "")), name=str(case.get("name", "")),
                                    passed=not messages and result != "SKIPPED", skipped=skipped,
                                    failures=messages))
    return GTestResults(cases)


def load_gtest_json(path: str) -> GTestResults:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise ResultsError("the test program wrote no results file")
    except OSError as exc:
        raise ResultsError("the results file could not be read: %s" % exc.strerror)
    if not raw.strip():
        raise ResultsError("the test program left an empty results file")
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        raise ResultsError("the results file is not valid JSON (the test program stopped while writing it?)")
    return parse_gtest_json(data)


def gtest_output_flag(path: str) -> str:
    return "--gtest_output=json:" + os.path.abspath(path)
