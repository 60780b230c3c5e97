import os
import unittest
import xml.etree.ElementTree as ElementTree

from course import pictures


class LessonPictures(unittest.TestCase):
    def test_the_committed_pictures_are_what_the_code_draws(self):
        # Edit tools/course/pictures.py, then regenerate: python3 -m course.pictures (from tools/).
        self.assertEqual(pictures.stale(), [])

    def test_each_picture_is_well_formed_svg_and_shown_by_its_lesson(self):
        for relative, draw in pictures.PICTURES.items():
            root = ElementTree.fromstring(draw())
            self.assertTrue(root.tag.endswith("svg"), relative)
            self.assertTrue(root.findall("{http://www.w3.org/2000/svg}title"), relative)
            folder, name = os.path.split(relative)
            with open(os.path.join(pictures.ROOT, folder, "README.md"), encoding="utf-8") as f:
                self.assertIn("](%s)" % name, f.read(), "%s is not shown in its lesson's README" % relative)

    def test_check_mode_reports_a_stale_picture(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            for relative in pictures.PICTURES:
                os.makedirs(os.path.join(tmp, os.path.dirname(relative)), exist_ok=True)
            pictures.write_all(tmp)
            self.assertEqual(pictures.stale(tmp), [])
            first = next(iter(pictures.PICTURES))
            with open(os.path.join(tmp, first), "a", encoding="utf-8") as f:
                f.write("<!-- edited by hand -->\n")
            self.assertEqual([p for p, _ in pictures.stale(tmp)], [first])


if __name__ == "__main__":
    unittest.main()
