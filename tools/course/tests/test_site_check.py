import os
import tempfile
import unittest

from course.site_check import broken_references


class SiteCheck(unittest.TestCase):
    def test_missing_images_and_pages_are_named_and_the_rest_is_not(self):
        with tempfile.TemporaryDirectory() as site:
            with open(os.path.join(site, "there.png"), "wb") as f:
                f.write(b"png")
            with open(os.path.join(site, "other.html"), "w") as f:
                f.write("<p>another page</p>")
            with open(os.path.join(site, "page.html"), "w") as f:
                f.write('<img src="there.png"/><img src="gone.png"/><object data="gone.svg"></object>'
                        '<a href="other.html#section">ok</a><a href="missing.html">no</a>'
                        '<a href="https://example.org/x.html">outside</a><a href="#top">here</a>'
                        '<a href="mailto:someone@example.org">mail</a>')
            self.assertEqual(broken_references(site), [
                "page.html: image gone.png is missing",
                "page.html: image gone.svg is missing",
                "page.html: link missing.html is missing",
            ])


if __name__ == "__main__":
    unittest.main()
