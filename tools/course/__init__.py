"""The course's command line (``./course``): build, run, test, grade, selftest, list.

Standard library only (Python 3.9+). ``./course`` at the repository root runs this package;
``python3 tools/course --help`` does the same.
"""
