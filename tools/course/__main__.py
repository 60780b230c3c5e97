"""Entry point: ``python3 tools/course ARGS`` (what the ``./course`` launcher runs)."""
import os
import sys

if __package__ in (None, ""):
    # Run as a folder (python3 tools/course): make ``course`` importable as a package so the
    # modules can use relative imports.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from course.cli import main
else:
    from .cli import main

if __name__ == "__main__":
    sys.exit(main())
