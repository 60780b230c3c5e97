"""Opens every page of the documentation site (`cmake --build <build> --target docs`) in a
headless Chromium and checks what a reader gets, where site_check.py only reads the HTML:

- each page loads, with no request that failed (a missing image, stylesheet or script) and no
  script error, and shows text, none of it Doxygen's own markup (what a construct Doxygen could
  not parse leaves behind);
- each image is drawn: decoded, with a size (a broken image has no natural width);
- each link between pages leads to a page of the site and, when it names an anchor, to an
  element of that page with that id or name;
- the search box finds a word every lesson uses ("kernel").

    python3 -m course.browser_check BUILD/docs/html [--screenshot PAGE.html OUT.png]

Prints one line per problem and exits 1 if there is any; exits 77 (CTest's "skipped") when no
Chromium is installed (Debian: apt-get install chromium-headless-shell, or chromium), 1 then
too with COURSE_DOCS_BROWSER_REQUIRED=1 (CI). COURSE_CHROMIUM names the browser to use. The
browser is driven through the DevTools protocol over a pipe (--remote-debugging-pipe), so
nothing but the browser itself is needed. `--screenshot` writes a PNG of one page, its first
picture and the text around it, for a person to look at."""
import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from typing import Dict, List, Optional, Set

SKIPPED = 77
BROWSERS = ("chromium", "chromium-headless-shell", "chrome-headless-shell", "google-chrome")

# What the page says about itself once loaded: the images that did not draw, every link (as
# the browser resolved it) and every anchor a link may name.
_PAGE_REPORT = r"""(async () => {
  // Doxygen's scripts add the menu and the search box's images after the load event.
  await new Promise(settled => setTimeout(settled, 50));
  await Promise.all(Array.from(document.images).map(image => image.complete ? null :
      new Promise(settled => { image.onload = image.onerror = settled; setTimeout(settled, 5000); })));
  const broken = Array.from(document.images)
      .filter(image => !(image.complete && image.naturalWidth > 0))
      .map(image => image.getAttribute('src'));
  const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.href);
  const anchors = Array.from(document.querySelectorAll('[id], a[name]'))
      .map(element => element.id || element.getAttribute('name'));
  const text = document.body ? document.body.innerText : '';
  // Doxygen's own markup shown as text: a construct it could not parse (an image whose alt
  // text spans two lines, say) turned the rest of the page into its intermediate form.
  const leaked = /@(sub)*section autotoc_md|@endcode|<\/?tt>/.exec(text);
  return {title: document.title, images: document.images.length, broken, links, anchors,
          text: text.length, leaked: leaked ? leaked[0] : ''};
})()"""


def find_browser() -> Optional[str]:
    explicit = os.environ.get("COURSE_CHROMIUM")
    if explicit:
        return shutil.which(explicit) or (explicit if os.access(explicit, os.X_OK) else None)
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """A headless Chromium and one tab, spoken to with DevTools protocol messages (JSON, each
    ended by a NUL byte) on the pipe Chromium reads as fd 3 and writes as fd 4."""

    def __init__(self, executable: str, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="course-browser-")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()

        def give_pipe_to_browser() -> None:
            os.dup2(to_browser_read, 3)
            os.dup2(from_browser_write, 4)

        arguments = [executable, "--headless", "--remote-debugging-pipe", "--disable-gpu",
                     "--no-first-run", "--no-default-browser-check", "--hide-scrollbars",
                     "--allow-file-access-from-files", "--user-data-dir=" + self._profile]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            arguments.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self._process = subprocess.Popen(arguments + ["about:blank"], pass_fds=(3, 4),
                                         preexec_fn=give_pipe_to_browser, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._pending = b""
        self._next_id = 0
        self.events: List[dict] = []
        self.session = ""
        target = self.command("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.command("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.command(domain + ".enable")

    def close(self) -> None:
        try:
            self.command("Browser.close", session=False)
        except BrowserError:
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise BrowserError("the browser did not answer within %.0f s" % self.timeout)
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise BrowserError("the browser closed its pipe (exit status %s)" % self._process.poll())
            self._pending += chunk
        message, self._pending = self._pending.split(b"\0", 1)
        return json.loads(message)

    def command(self, method: str, params: Optional[dict] = None, session: bool = True) -> dict:
        """Sends a command to the tab (or, with session=False, to the browser) and returns its
        result; events that arrive meanwhile are kept in `events`."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_browser, data):]
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError("%s: %s" % (method, reply["error"].get("message")))
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for_event(self, method: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(i)
            event = self._receive(deadline)
            if "method" in event:
                self.events.append(event)

    def open(self, url: str) -> List[str]:
        """Loads `url` and waits for its load event; returns what went wrong while loading."""
        self.events.clear()
        navigated = self.command("Page.navigate", {"url": url})
        if navigated.get("errorText"):
            return ["does not load (%s)" % navigated["errorText"]]
        self.wait_for_event("Page.loadEventFired")
        problems = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Network.loadingFailed" and not params.get("canceled"):
                problems.append("a request failed (%s)" % params.get("errorText"))
            elif event["method"] == "Network.responseReceived" and params.get("response", {}).get("status", 200) >= 400:
                problems.append("%s answered %s" % (params["response"]["url"], params["response"]["status"]))
            elif event["method"] == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                problems.append("script error: %s" % details.get("exception", {}).get("description", details.get("text")))
        return problems

    def evaluate(self, expression: str):
        result = self.command("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                   "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError("evaluating a check failed: %s" % result["exceptionDetails"].get("text"))
        return result["result"].get("value")

    def screenshot(self, path: str, width: int = 1280, height: int = 1500) -> None:
        """A PNG of the page's first picture with the text around it (the top of the page when
        it has none), `width` x `height` CSS pixels."""
        self.command("Emulation.setDeviceMetricsOverride",
                     {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        top = self.evaluate("""(() => {
          const image = document.querySelector('.contents img, .contents object');
          if (!image) return 0;
          return Math.max(0, image.getBoundingClientRect().top + window.scrollY - 400);
        })()""")
        shot = self.command("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": top, "width": width, "height": height, "scale": 1}})
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))


def _page_of(url: str, site: str) -> Optional[str]:
    """The site-relative file a file:// URL names, or None for one outside the site."""
    path = os.path.realpath(urllib.parse.unquote(urllib.parse.urlparse(url).path))
    if os.path.commonpath([path, site]) != site:
        return None
    return os.path.relpath(path, site)


def check_site(browser: Browser, site: str, search_word: Optional[str] = "kernel", log=print) -> List[str]:
    """Every problem a reader would meet on the site's pages, one line each; `search_word`
    (None: no search) must be found by the main page's search box."""
    site = os.path.realpath(site)
    pages = sorted(name for name in os.listdir(site) if name.endswith(".html"))
    anchors: Dict[str, Set[str]] = {}
    links: Dict[str, List[str]] = {}
    problems: List[str] = []
    images = 0
    for name in pages:
        for problem in browser.open("file://" + os.path.join(site, name)):
            problems.append("%s: %s" % (name, problem))
        report = browser.evaluate(_PAGE_REPORT)
        if report["text"] == 0:
            problems.append("%s: the page shows no text" % name)
        if report["leaked"] and not name.endswith("_source.html"):  # a source listing may quote markup
            problems.append("%s: the page shows Doxygen's markup (%r) as text" % (name, report["leaked"]))
        images += report["images"]
        problems.extend("%s: image %s is not drawn" % (name, src) for src in report["broken"])
        anchors[name] = set(report["anchors"])
        links[name] = report["links"]
    followed = external = 0
    for name in pages:
        for url in links[name]:
            parsed = urllib.parse.urlparse(url)
            if parsed.scheme != "file":
                external += parsed.scheme in ("http", "https", "mailto")
                continue
            target = _page_of(url, site)
            if target is None:
                problems.append("%s: link %s leaves the site" % (name, url))
                continue
            followed += 1
            if not os.path.exists(os.path.join(site, target)):
                problems.append("%s: link to %s, which does not exist" % (name, target))
            elif parsed.fragment and target in anchors and \
                    urllib.parse.unquote(parsed.fragment) not in anchors[target]:
                problems.append("%s: link to %s#%s, which has no such anchor" % (name, target, parsed.fragment))
    if search_word is not None:
        problems.extend(check_search(browser, site, search_word))
    log("browser_check: %d pages loaded, %d images drawn, %d links within the site followed, "
        "%d links to other sites not followed" % (len(pages), images, followed, external))
    return problems


def check_search(browser: Browser, site: str, word: str = "kernel") -> List[str]:
    """Types `word` into the main page's search box and reads the results Doxygen shows."""
    browser.open("file://" + os.path.join(site, "index.html"))
    found = browser.evaluate("""(async () => {
      const soon = () => new Promise(settled => setTimeout(settled, 100));
      for (let tries = 0; !document.getElementById('MSearchField') && tries < 50; ++tries) await soon();
      const field = document.getElementById('MSearchField');
      if (!field || typeof searchBox === 'undefined') return -1;
      field.value = %s;
      searchBox.Search();
      for (let tries = 0; tries < 50; ++tries) {
        const frame = document.getElementById('MSearchResults');
        const results = frame && frame.contentDocument ?
            Array.from(frame.contentDocument.querySelectorAll('.SRResult'))
                .filter(result => result.style.display !== 'none' &&
                                  result.textContent.toLowerCase().includes(field.value)).length : 0;
        if (results > 0) return results;
        await soon();
      }
      return 0;
    })()""" % json.dumps(word))
    if found == -1:
        return ["index.html: there is no search box"]
    if not found:
        return ["index.html: searching for %r finds nothing" % word]
    return []


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m course.browser_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("site", help="the folder Doxygen wrote (BUILD/docs/html)")
    parser.add_argument("--screenshot", nargs=2, metavar=("PAGE", "PNG"),
                        help="also write a PNG of PAGE (a file of the site) to PNG")
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(args.site, "index.html")):
        print("browser_check: %s has no index.html: build the site first (cmake --build BUILD --target docs)"
              % args.site, file=sys.stderr)
        return 2
    executable = find_browser()
    if executable is None:
        required = os.environ.get("COURSE_DOCS_BROWSER_REQUIRED") == "1"
        print("browser_check: %s, no Chromium found (Debian/Ubuntu: apt-get install "
              "chromium-headless-shell, or chromium; or set COURSE_CHROMIUM)"
              % ("failed: COURSE_DOCS_BROWSER_REQUIRED=1" if required else "skipped"))
        return 1 if required else SKIPPED
    try:
        with Browser(executable) as browser:
            problems = check_site(browser, args.site)
            if args.screenshot:
                page, png = args.screenshot
                for problem in browser.open("file://" + os.path.join(os.path.realpath(args.site), page)):
                    problems.append("%s: %s" % (page, problem))
                browser.screenshot(png)
                print("browser_check: wrote %s (%s)" % (png, page))
    except BrowserError as e:
        print("browser_check: %s (%s)" % (e, executable), file=sys.stderr)
        return 1
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
