"""What a piece of license text that no template explains does (restricts, conditions, grants).

A template's variable regions (a copyright line, "[fullname]", "the copyright holder") may
only be filled by what they stand for: a name, a year, an address, a list of holders. These
helpers tell such fillings from sentences and clauses, find a clause appended to a copyright
line, and sort extra text by its effect (restriction, condition, grant); the words a reviewer
reads for each effect are in ``crawler.report.words``.
"""

from __future__ import annotations

import re
from itertools import pairwise

from crawler.model import SpanEffect, TextSpan

SPAN_EFFECTS: tuple[SpanEffect, ...] = ("restriction", "condition", "grant", "other")
QUOTE_CHARS = 300  # a finding quotes at most this much of the span

# Words that make a sentence and hardly ever stand in a name, a year or an address.
_SENTENCE_WORDS = frozenset(
    (
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "isn't",
        "aren't",
        "not",
        "no",
        "never",
        "nor",
        "may",
        "must",
        "shall",
        "will",
        "would",
        "should",
        "can",
        "cannot",
        "can't",
        "could",
        "might",
        "do",
        "does",
        "did",
        "don't",
        "doesn't",
        "this",
        "that",
        "these",
        "those",
        "you",
        "your",
        "yours",
        "we",
        "our",
        "us",
        "they",
        "them",
        "he",
        "she",
        "who",
        "whom",
        "which",
        "whose",
        "whoever",
        "if",
        "unless",
        "except",
        "only",
        "without",
        "any",
        "anyone",
        "anybody",
        "everyone",
        "hereby",
        "herein",
        "hereunder",
        "thereof",
        "please",
        "also",
        "such",
        "than",
        "whether",
        "because",
        "whatsoever",
    )
)
# Stems of words that grant, restrict or condition rights (matched at the start of a word).
_LEGAL_STEMS = (
    "prohibit",
    "forbid",
    "permit",
    "permission",
    "restrict",
    "exclud",
    "notif",
    "royalt",
    "fee",
    "paid",
    "payment",
    "noncommercial",
    "non-commercial",
    "licens",
    "licenc",
    "grant",
    "allow",
    "requir",
    "consent",
    "approv",
    "use",
    "usage",
    "using",
    "distribut",
    "redistribut",
    "sell",
    "resell",
    "sold",
    "modif",
    "waive",
    "revok",
    "revoc",
    "terminat",
    "agree",
    "dedicat",
    "sublicens",
    "relicens",
    "exempt",
    "authori",
    "entitle",
    "purpos",
    "copy",
    "copies",
    "expir",
    "withh",
    "limit",
)
_LEGAL_RE = re.compile("|".join(map(re.escape, _LEGAL_STEMS)))
# Nouns the issue names (commercial, military, government): a clause on a copyright line
# only with another clause word, since holders are called "X Government" or "Y Commercial".
_WEAK_WORDS = frozenset(
    (
        "commercial",
        "military",
        "government",
        "governments",
        "governmental",
        "agency",
        "agencies",
        "weapons",
        "police",
        "army",
        "educational",
        "academic",
        "personal",
        "research",
        "evaluation",
        "internal",
        "private",
        "nonprofit",
        "non-profit",
        "students",
    )
)
# Lower-case words that do occur in holder lines ("and its affiliates", "van der Berg").
_NAME_WORDS = frozenset(
    (
        "and",
        "of",
        "the",
        "its",
        "for",
        "at",
        "in",
        "on",
        "by",
        "from",
        "de",
        "da",
        "del",
        "della",
        "di",
        "du",
        "des",
        "la",
        "le",
        "van",
        "von",
        "der",
        "den",
        "ten",
        "ter",
        "et",
        "al",
        "y",
        "contributors",
        "contributor",
        "authors",
        "author",
        "others",
        "other",
        "affiliates",
        "affiliate",
        "subsidiaries",
        "developers",
        "maintainers",
        "present",
        "inc",
        "ltd",
        "llc",
        "corp",
        "co",
        "gmbh",
        "ag",
        "sa",
        "bv",
        "all",
        "rights",
        "reserved",
        "as",
        "represented",
        "team",
        "project",
        "members",
        "individual",
        "respective",
        "owners",
        "holders",
        "see",
        "file",
        "files",
        "copyright",
    )
)
_ADDRESS_RE = re.compile(r"\S+@\S+|\b(?:https?|ftp)://\S+|\bwww\.\S+|\b[\w-]+\.(?:[a-z]{2,5})\b")
_WORD_RE = re.compile(r"[^\W\d_](?:[\w'’-]*\w)?")
_ABBREV = (
    "inc.",
    "ltd.",
    "co.",
    "corp.",
    "l.p.",
    "s.a.",
    "jr.",
    "sr.",
    "llc.",
    "e.v.",
    "b.v.",
    "st.",
    "dr.",
    "prof.",
    "al.",
    "e.g.",
    "i.e.",
    "etc.",
    "no.",
    "vs.",
)
# Where a clause can begin on a copyright line: after , ; : ( or a dash, after a full stop
# that ends a sentence, or before a relative pronoun or conjunction.
_CLAUSE_BREAK_RE = re.compile(
    r"[,;:(\[]\s*|[)\]]\s+|\s[-–—]+\s+|(?<=[a-z0-9)\]])\.\s+(?=\S)"
    r"|\s(?=(?:who|which|that|but|except|excluding|provided|unless|subject|only|not|no|"
    r"for\s+non)\b)",
    re.IGNORECASE,
)
# who a holder line names beside the holder ("Eclipse Foundation, Inc. and its licensors")
_HOLDER_NOUNS = frozenset(("licensor", "licensors"))
_CONJUNCTIONS = frozenset(("and", "but", "or", "yet", "so", "And", "But", "Or"))
_ALL_RIGHTS_RE = re.compile(r"\ball rights reserved\b\.?", re.IGNORECASE)


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(_ADDRESS_RE.sub(" ", text))


def _clause_words(words: list[str]) -> tuple[int, int]:
    """(sentence or legal words, weak nouns) among ``words``."""
    strong = weak = 0
    for w in words:
        low = w.lower().replace("’", "'")
        if low in _SENTENCE_WORDS or (
            _LEGAL_RE.match(low) and not low.startswith("copyright") and low not in _HOLDER_NOUNS
        ):
            strong += 1
        elif low in _WEAK_WORDS:
            weak += 1
    return strong, weak


def reads_as_prose(text: str) -> bool:
    """True for a sentence or clause; False for a name, a year, an address, a list of
    holders, "and contributors" — what a template's variable region stands for."""
    words = _words(text)
    strong, _ = _clause_words(words)
    if strong:
        return True
    common = [w for w in words if w.islower() and len(w) > 1 and w not in _NAME_WORDS]
    return len(common) >= 2


def copyright_clause(line: str) -> int | None:
    """Offset in a copyright line where a clause that grants, restricts or conditions begins
    ("Copyright (c) 2024 Jane Doe, who forbids use by any government agency"), or None
    when the line only names holders and years."""
    cleaned = _ALL_RIGHTS_RE.sub(lambda m: " " * len(m.group()), line)
    holder = re.search(r"[^\W\d_]", _lead_removed(cleaned))
    if holder is None:
        return None
    first = len(cleaned) - len(_lead_removed(cleaned)) + holder.end()
    starts = [
        m.end()
        for m in _CLAUSE_BREAK_RE.finditer(cleaned, first)
        if not (
            m.group().lstrip().startswith(".")
            and cleaned[: m.start() + 1].lower().endswith(_ABBREV)
        )
    ]
    bounds = [*starts, len(cleaned)]
    for n, (at, end) in enumerate(pairwise(bounds)):
        strong, weak = _clause_words(_words(cleaned[at:end]))
        if strong or weak >= 2:
            # "…, and no one may …": a bare conjunction before the clause belongs to it
            while n and set(_words(cleaned[bounds[n - 1] : at])) <= _CONJUNCTIONS:
                n -= 1
                at = bounds[n]
            return at  # the clause runs to the end of the line
    return None


_LEAD_RE = re.compile(
    r"^[\s*#/;>|!-]*(?:spdx-filecopyrighttext\s*:\s*)?(?:(?:copyright|\(c\)|©)[\s:,]*)*"
    r"(?:(?:\d{4}|present)\s*(?:[-–,]\s*)?)*",
    re.IGNORECASE,
)


def _lead_removed(line: str) -> str:
    return line[_LEAD_RE.match(line).end() :]  # type: ignore[union-attr]  # matches any line


# --- effect of a span -----------------------------------------------------------------------

_NOT_LIMITS_RE = re.compile(
    r"without (?:any )?(?:restriction|limitation)s?|not (?:be )?required|no (?:fee|charge|"
    r"royalt\w*)|free of charge|not obliged|are not restricted|unrestricted",
    re.IGNORECASE,
)
_RESTRICTION_RE = re.compile(
    r"\b(?:may|shall|must|can|will|does|do|is|are|was)\s+not\b|\bcannot\b|\bcan't\b|"
    r"\b(?:doesn't|don't|isn't|aren't|won't)\b|\bnot\s+(?:be\s+)?(?:permitted|allowed|"
    r"granted|licen[cs]ed|authori[sz]ed|extend|apply|cover|for)\b|\bno\s+(?:\w+\s+){0,2}?"
    r"(?:use|rights?|permission|licen[cs]e|one|person|entity|organi[sz]ation)\b|"
    r"\bprohibit|\bforbid|\brestrict|\bexclud|\bexcept\b|\bnon-?commercial|\bonly\b|"
    r"\bwithout\s+(?:the\s+)?(?:prior\s+)?(?:express\s+)?(?:written\s+)?(?:permission|"
    r"consent|approval|authori[sz]ation)|\brevok|\brevoc|\bterminat|\bnever\b|\bneither\b|"
    r"\bnor\b|\bbann?ed\b|\bdenied\b|\bdisallow|\bnot\s+to\s+be\b|\blimit|\bwithh[oe]ld|"
    r"\bfor\s+(?:(?:personal|private|internal|educational|academic|research|evaluation|"
    r"non-?profit|hobby)(?:\s*(?:,|and|or)\s*|\s+))+(?:use|purposes?|projects?|only)\b",
    re.IGNORECASE,
)
_CONDITION_RE = re.compile(
    r"\bmust\b|\bshall\b|\brequir|\bprovided\s+that\b|\bon\s+condition|\bsubject\s+to\b|"
    r"\bnotif|\broyalt|\bfees?\b|\bpay|\bpaid\b|\bcharge|\bin\s+writing\b|\bwritten\s+"
    r"(?:agreement|permission|consent|notice)|\bunless\b|\bas\s+long\s+as\b|\bif\s+you\b|"
    r"\bagreement\b|\bregist|\bcontact\b|\bobligat|\bask\b|(?<!-)\bapprov(?:al|e)\b|"
    r"\bsign-?off|\bneeds?\s+(?:our|the|an?|written|prior)\b|\bexpir",
    re.IGNORECASE,
)
_GRANT_RE = re.compile(
    r"\bgrant|\bpermission\b|\bpermit|\bmay\b|\bcan\b|\ballow|\bfree\s+(?:to|of|for)\b|"
    r"\bwaive|\bdedicat|\bpublic\s+domain|\bat\s+your\s+option|\bdual|\blicen[cs]ed\s+under|"
    r"\brelicen|\bsublicen|\bentitle|\bright\s+to\b",
    re.IGNORECASE,
)


def span_effect(text: str) -> SpanEffect:
    """What a span of extra or altered text does to the terms, from its wording: a
    restriction ("may not", "prohibited", "only", "except", "non-commercial") outranks a
    condition ("must", "requires", "notify", "fee"), which outranks a grant ("may", "is
    granted", "public domain"); anything else is "other". Words are read, not understood:
    this ranks findings for a reviewer, it does not interpret them."""
    flat = " ".join(text.split())
    plain = _NOT_LIMITS_RE.sub(" ", flat)
    if _RESTRICTION_RE.search(plain):
        return "restriction"
    if _CONDITION_RE.search(plain):
        return "condition"
    if _GRANT_RE.search(flat):
        return "grant"
    return "other"


def text_span(start_line: int, end_line: int, text: str) -> TextSpan:
    """A span of the file, with what its wording does (``span_effect``)."""
    return TextSpan(start_line, end_line, text, span_effect(text))


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """The span's text on one line, whitespace collapsed, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
