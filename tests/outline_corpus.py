"""How well `web.py outline` finds real pages' own headings: real Firecrawl pages, their HTML's headings
as ground truth (tests/fixtures/realpages and realcorpus, see their READMEs), and an outline's score.

How texts match: a heading is found when an outline entry has the same text once both are normalised:
NFKC, casefold, images, link marks, markdown escapes, `*`, `_`, `` ` `` and the permalink mark ¶
dropped, and no spaces at all (Firecrawl adds and drops spaces where it breaks a line after a link, in
`Vec <u8 , A>`; the outline cannot tell them from the page's). Other mangling is not forgiven: an entry
with a stray `\\`, its permalink's URL or an image's alt text left in is not the heading. Texts repeat
(DocBook's "Note"; Sphinx's sidebar twice in the HTML, once in the markdown), so they count as multisets:
- own: a truth heading counts only as many times as its text stands as a line or paragraph of the saved
  page (Firecrawl's main-content step drops some: the git man pages' h1 and NAME, javadoc's title);
- found: own headings that outline entries of the same text cover;
- non-headings: outline entries beyond the truth's count of their text (none for a text not in it).
Truth is HTML h1–h4 and so is recall; entries of levels 5–6 (found too) are not scored, as the truth
has no h5–h6 to check them against; a truth heading with no text is left out.

Where the main text starts: the expected line is the page's top heading, the first in the page of the
own headings of the highest level (Sphinx's h3 "Navigation" menu is not it; its h1 is). Tests want
exactly that line where the page's top HTML heading is left ("titled"). Where Firecrawl dropped the
title, the text may rightly start above the first heading left: a start is right ("start_ok") when it
is not after that heading and no menu (three or more lines of links and nothing else) lies from it to
there; on a page without headings, when its first line is not a line of links.
"""

import json
import os
import re
import unicodedata
from collections import Counter

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "realpages")
IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
LINK = re.compile(r"\[((?:\\.|[^\]\\\n])*)\]\([^)\n]*\)")
ATX = re.compile(r"(?:\s*(?:[-*+]|\d{1,9}[.)])[ \t]+)*\s*#{1,6}(?:[ \t]+|$)")   # in list items too
CELL = re.compile(r"\|\s*([^|<]+)<br>(?:=+|-+)(?:<br>|\s*\|)")   # a heading in a table cell
RULE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")


def normalised(text):
    text = LINK.sub(r"\1", IMAGE.sub("", unicodedata.normalize("NFKC", text)))
    text = re.sub(r"\\(.)", r"\1", text).replace("¶", " ")
    return "".join(re.sub(r"[`*_]", "", text).split()).casefold()


def read_truth(folder=FIXTURES):
    """{file name: [(level, text)]} from the folder's headings.json."""
    with open(os.path.join(folder, "headings.json"), encoding="utf-8") as handle:
        return {name: [tuple(h) for h in entry["headings"]] for name, entry in json.load(handle).items()}


def read_page(name, folder=FIXTURES):
    with open(os.path.join(folder, name), encoding="utf-8") as handle:
        return handle.read()


def page_texts(lines):
    """Counter of the normalised texts that stand as a line, or as a paragraph of several lines, of the page."""
    texts, paragraph = Counter(), []
    for line in lines + [""]:
        line = ATX.sub("", line.rstrip().rstrip("\\"), count=1)
        if line.strip() and not RULE.match(line):
            texts[normalised(line)] += 1
            paragraph.append(line)
            continue
        if len(paragraph) > 1:
            texts[normalised(" ".join(paragraph))] += 1
        paragraph = []
    return texts


def heading_line(lines, text):
    """1-based line of the first ATX line, or setext paragraph (its underline maybe after a blank line),
    whose text is `text` normalised; None if there is none."""
    for i, line in enumerate(lines):
        if CELL.match(line) and normalised(CELL.match(line).group(1)) == text:
            return i + 1
        if ATX.match(line) and normalised(ATX.sub("", line.rstrip("\\ "), count=1)) == text:
            return i + 1
        if RULE.match(line) and i:
            end = i - 1 if lines[i - 1].strip("\\ ") or i < 2 else i - 2
            start = end
            while start > 0 and lines[start - 1].strip("\\ "):
                start -= 1
            if normalised(" ".join(l.rstrip("\\ ") for l in lines[start:end + 1])) == text:
                return start + 1
    return None


def link_only(line):
    """A line of links or images and no words besides (a menu's line)."""
    rest = LINK.sub(" ", IMAGE.sub(" ", line))
    return rest != line and not re.search(r"\w", rest.replace("<br>", " "))


def menu_between(lines, start, end):
    """True when lines start..end-1 (1-based) hold three link-only lines with only blank or punctuation
    lines between them."""
    run = 0
    for line in lines[start - 1:end - 1]:
        if link_only(line):
            run += 1
            if run == 3:
                return True
        elif re.search(r"\w", line):
            run = 0
    return False


def page_score(text, truth, facts):
    """{"own", "found", "entries", "wrong", "start", "expected"} of outline_facts `facts` of page `text`."""
    lines = text.split("\n")
    present = page_texts(lines)
    wanted = Counter(normalised(t) for level, t in truth if level <= 4 and normalised(t))   # "" is no title
    every = Counter(normalised(t) for _, t in truth)
    own = {t: min(n, present[t]) for t, n in wanted.items() if present[t]}
    got = Counter(normalised(h[4]) for h in facts["headings"] if h[2] <= 4)   # the truth has no h5–h6
    top = min((level for level, t in truth if normalised(t) in own), default=None)
    titled = top is not None and top == min(level for level, t in truth if normalised(t))
    first = [heading_line(lines, normalised(t)) for level, t in truth if level == top]
    start, expected = facts["main"][0], min((n for n in first if n), default=None)
    return {"own": sum(own.values()), "found": sum(min(n, got[t]) for t, n in own.items()),
            "entries": sum(got.values()), "wrong": sum(max(0, n - every[t]) for t, n in got.items()),
            "start": start, "expected": expected, "titled": titled,
            "start_ok": start <= expected and not menu_between(lines, start, expected) if expected
            else not link_only(next((line for line in lines[start - 1:] if line.strip()), ""))}


def totals(scores):
    """(recall, non-heading share, pages whose main text starts right, pages) over page scores."""
    own, found = sum(s["own"] for s in scores), sum(s["found"] for s in scores)
    entries, wrong = sum(s["entries"] for s in scores), sum(s["wrong"] for s in scores)
    return (found / own if own else 1.0, wrong / entries if entries else 0.0,
            sum(s["start_ok"] for s in scores), len(scores))
