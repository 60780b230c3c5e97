"""The docs site's browser check, on small sites made here: a planted defect of each kind is
reported, a sound site passes. Skipped where no Chromium is installed (CI installs one)."""
import base64
import os
import tempfile
import unittest

from course.browser_check import Browser, check_site, find_browser

# A 1x1 PNG.
_PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def _write(site: str, name: str, content) -> None:
    with open(os.path.join(site, name), "wb" if isinstance(content, bytes) else "w") as f:
        f.write(content)


@unittest.skipUnless(find_browser(), "no Chromium installed")
class BrowserCheck(unittest.TestCase):
    def check(self, site: str, search_word=None):
        with Browser(find_browser()) as browser:
            return check_site(browser, site, search_word=search_word, log=lambda line: None)

    def test_a_sound_site_passes(self):
        with tempfile.TemporaryDirectory() as site:
            _write(site, "pixel.png", _PIXEL)
            _write(site, "index.html", '<h1 id="top">Course</h1><img src="pixel.png">'
                                       '<a href="other.html#part">on</a><a href="https://example.org/">out</a>')
            _write(site, "other.html", '<p>Another page</p><h2 id="part">Part</h2><a href="index.html#top">back</a>')
            self.assertEqual(self.check(site), [])

    def test_each_planted_defect_is_named(self):
        with tempfile.TemporaryDirectory() as root:
            site = os.path.join(root, "html")
            os.mkdir(site)
            _write(site, "not-a.png", b"this is text, not a picture")
            _write(site, "index.html",
                   '<p>Course</p><img src="gone.png"><img src="not-a.png">'
                   '<a href="missing.html">1</a><a href="other.html#nowhere">2</a><a href="../outside.html">3</a>'
                   '<script>no_such_function();</script>')
            _write(site, "other.html", "<p>@subsection autotoc_md12 A heading Doxygen did not parse</p>")
            _write(site, "empty.html", "")
            problems = self.check(site, search_word="kernel")
        expected = [
            "empty.html: the page shows no text",
            "index.html: a request failed (net::ERR_FILE_NOT_FOUND)",
            "index.html: image gone.png is not drawn",
            "index.html: image not-a.png is not drawn",
            "other.html: the page shows Doxygen's markup ('@subsection autotoc_md') as text",
            "index.html: link to missing.html, which does not exist",
            "index.html: link to other.html#nowhere, which has no such anchor",
            "index.html: there is no search box",
        ]
        for line in expected:
            self.assertIn(line, problems)
        self.assertTrue(any(p.startswith("index.html: script error: ReferenceError: no_such_function")
                            for p in problems), problems)
        self.assertTrue(any(p.startswith("index.html: link file://") and p.endswith("outside.html leaves the site")
                            for p in problems), problems)
        self.assertEqual(len(problems), len(expected) + 2, problems)


if __name__ == "__main__":
    unittest.main()
