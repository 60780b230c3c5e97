"""Checks the documentation site that Doxygen builds (`cmake --build <build> --target docs`):
every image and every link between its pages points at a file that is there.

    python3 -m course.site_check BUILD/docs/html      (from tools/)

Prints one line per broken reference ("page: image x.png is missing") and exits 1 if there is
any. Links to other sites, mail addresses and in-page anchors are not followed; a link's
#anchor is dropped before the file is looked up."""
import html.parser
import os
import sys
import urllib.parse
from typing import List, Tuple


class _References(html.parser.HTMLParser):
    """The local files a page refers to: (kind, target)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: List[Tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "img" and attributes.get("src"):
            self.found.append(("image", attributes["src"]))
        elif tag == "object" and attributes.get("data"):
            self.found.append(("image", attributes["data"]))
        elif tag == "a" and attributes.get("href"):
            self.found.append(("link", attributes["href"]))


def _local(target: str) -> str:
    """The file part of a reference, or "" for one that leaves the site or stays on the page."""
    parsed = urllib.parse.urlparse(target)
    if parsed.scheme or parsed.netloc or target.startswith("#") or target.startswith("javascript:"):
        return ""
    return urllib.parse.unquote(parsed.path)


def broken_references(site: str) -> List[str]:
    problems = []
    for name in sorted(os.listdir(site)):
        if not name.endswith(".html"):
            continue
        parser = _References()
        with open(os.path.join(site, name), encoding="utf-8", errors="replace") as f:
            parser.feed(f.read())
        for kind, target in parser.found:
            path = _local(target)
            if path and not os.path.exists(os.path.join(site, path)):
                problems.append("%s: %s %s is missing" % (name, kind, target))
    return problems


def main(argv: List[str]) -> int:
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        print("usage: python3 -m course.site_check BUILD/docs/html", file=sys.stderr)
        return 2
    problems = broken_references(argv[0])
    for line in problems:
        print(line)
    print("%s: %d broken reference%s" % (argv[0], len(problems), "" if len(problems) == 1 else "s"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
