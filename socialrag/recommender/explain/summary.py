"""A short summary of a paper without an LLM: Semantic Scholar's tldr, or sentences picked from the abstract; when
the abstract is missing or says too little, from the full text's contribution sentences (its introduction's "we
propose", "our contributions", "in this paper") or its conclusion."""

from __future__ import annotations

import re
from collections.abc import Sequence

from socialrag.text import as_data

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_CUES = (
    "we propose",
    "we present",
    "we introduce",
    "this paper",
    "in this work",
    "we show",
    "we find",
    "we develop",
    "our results",
    "we demonstrate",
    "this work",
    "here we",
    "we describe",
    "we study",
)


# a full stop that ends an abbreviation or an initial, not a sentence ("Lee et al. (2016) show", "e.g. BERT",
# "J. Smith")
_ABBREVIATION = re.compile(
    r"(?:\bet al|\be\.g|\bi\.e|\bcf|\bvs|\bFigs?|\bEqs?|\bSecs?|\bTab|\bNo|\bapprox|\bDr|\bProf|"
    r"(?<![\w.])[A-Z])\.$"
)
# a sentence that cites another work ("Lee et al. (2016) present ...", "... as in [12].") speaks of that work
_CITES = re.compile(r"\bet al\b|\(\s*(?:19|20)\d\d[a-z]?\s*\)|\[\d+(?:\s*[,–-]\s*\d+)*\]")


# a sentence cut short: the abstract stops mid-sentence, or its link was taken out ("The code is available at")
_BROKEN = re.compile(
    r"(?:[^.!?)\]\"'”’…。！？]|\b(?:at|and|or|from|in|on|to|of|the|a|an|with|by|via|see|under|here|is|are|as)\s*[.:]?)$",
    re.IGNORECASE,
)


def split_sentences(text: str) -> list[str]:
    pieces = [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]
    sentences: list[str] = []
    for piece in pieces:
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] += " " + piece
        else:
            sentences.append(piece)
    return sentences


def _score(sentence: str, position: int) -> float:
    lowered = sentence.lower()
    score = sum(2.0 for cue in _CUES if cue in lowered)
    score += 1.0 if re.search(r"\d", sentence) else 0.0
    score -= 0.3 * position
    if len(sentence) < 40:
        score -= 2.0
    if _CITES.search(sentence):
        score -= LEANING_PENALTY  # what another paper did is not what this one is about
    return score


BACKGROUND_PENALTY = 1.0  # a second sentence from before the main one is motivation, not the paper
LEANING_PENALTY = 4.0  # a sentence that points at what the post does not say loses to most that do not
_CONNECTIVES = re.compile(
    r"^(?:however|but|yet|moreover|thus|therefore|furthermore|in addition|in contrast|instead|also|finally|then|"
    r"additionally|consequently|hence|similarly|specifically|second(?:ly)?|third(?:ly)?|lastly|besides|still|"
    r"nevertheless|nonetheless|accordingly|as a result|to do so|to that end|in turn)\b",
    re.IGNORECASE,
)
_SELF = r"(?:paper|work|study|article|letter|thesis|dissertation|abstract)"
_POINTER = re.compile(rf"\b(?:this|these|those|such|said)\s+(?!{_SELF}\b|as\b|that\b)[a-z][a-z-]*", re.IGNORECASE)
# "their method", "their results": another group's work, named in a sentence before
_THEIR_WORK = re.compile(
    r"\btheir\s+(?:[a-z-]+\s+)?(?:method|approach|model|work|system|technique|result|finding|framework|algorithm|"
    r"analysis|assumption|idea|proposal|solution)s?\b",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(r"^\(?(?:\d{1,2}|[a-z]|i{1,3}|iv|v)\)\s")  # "(2) Represent each node ...": one item of a list
_PRONOUN_START = re.compile(
    r"^(?:it|its|they|their|them|this|these|those|such|both|the former|the latter|"
    r"the (?:task|problem|approach|method|model|framework|setting|system|technique|dataset|corpus|same))\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:we|our|ours|us)\b", re.IGNORECASE)
# "... for this task," / "... in this area." : a closing phrase that only points back can go
_TRAILING_POINTER = re.compile(
    rf"\s+(?:for|in|to|on|across|within|from)\s+(?:this|these|those|such)\s+(?!{_SELF}\b)[a-z][a-z-]*(?=[,.;:]|$)",
    re.IGNORECASE,
)
# "To take a step toward closing this gap, we introduce ..." : the opening clause that points back can go
# ("As this interest will grow, this paper presents ...": the same before "this paper")
_LEADING_POINTER = re.compile(
    r"^[^,]{0,100}\b(?:this|these|those|such)\b[^,]{0,60},\s+((?:we|this (?:paper|work|study|article))\s+[a-z]+\b.*)$",
    re.IGNORECASE,
)


# "We address this problem by proposing X" says "We propose X", and so does "We outline an effort to shrink this
# knowledge gap by creating X" ("We create X"): what comes before "by" only points back. Not across a clause that
# states a finding ("We show that these gains hold by comparing ..." stays), and only for a verb of what a paper
# makes or does (``PAPER_VERBS``: "by using" stays too)
_ADDRESS_BY = re.compile(
    r"^(we|it)\s+(?:(?!(?:that|which|whether|how|if)\b)[a-z-]+\s+){1,12}?(?:this|these|those|such)\s+"
    r"[a-z-]+(?:\s+[a-z-]+)?\s+by\s+([a-z]+)ing\b",
    re.IGNORECASE,
)


def _said_plainly(m: re.Match[str]) -> str:
    stem = m.group(2).lower()
    base = next((b for b in (stem, stem + "e", stem[:-1]) if b in PAPER_VERBS), None)
    if base is None:
        return m.group(0)
    return f"We {base}" if m.group(1).lower() == "we" else f"It {PAPER_VERBS[base]}"


# "allows us to", "used by us": the authors, as the post speaks of them
_US = re.compile(
    r"\b(allows?|allowed|enables?|enabled|helps?|helped|lets?|requires?|required|leads?|led|restricts?|restricted|"
    r"forces?|forced|gives?|gave|by)\s+us\b"
)


def resolve(sentence: str) -> str:
    """An abstract sentence with what only points back at the sentences before it taken out where that can be
    done safely (an opening clause before "we ...", a closing "for this task"); the rest left as it is."""
    m = _LEADING_POINTER.match(sentence)
    if m:
        sentence = m.group(1)[0].upper() + m.group(1)[1:]
    sentence = _TRAILING_POINTER.sub("", sentence)
    sentence = _ADDRESS_BY.sub(_said_plainly, sentence)
    opening = _OPENING.match(sentence)  # "In this work we study", "Here, we present": speak_of_the_paper's
    end = opening.end() if opening else 0
    head, sentence = sentence[:end], sentence[end:]
    sentence = re.sub(r"^Our\b", "The", sentence)
    sentence = re.sub(r"\bour\b", "the", sentence)  # "our method" is the paper's method
    sentence = _US.sub(lambda m: f"{m.group(1)} the authors", sentence)  # "which allows us to ..."
    return head + re.sub(r"(?<=[a-z,;:)] )we\b(?= [a-z])", "the authors", sentence)  # "..., we present ..."


def stands_alone(original: str, said: str) -> bool:
    """Whether a sentence (as ``said`` in the post, from the abstract's ``original``) reads whole without the
    sentences around it: no connective at its start, no "this task", "these", "such", no pronoun opening it,
    no "we" or "our" left."""
    if _CONNECTIVES.match(original) or _CONNECTIVES.match(said) or _LIST_ITEM.match(original):
        return False
    if said == original and _PRONOUN_START.match(original):
        return False
    return not (_POINTER.search(said) or _FIRST_PERSON.search(said) or _THEIR_WORK.search(said))


POOR_ABSTRACT = 25  # an abstract of fewer words than this says too little for a gist ("Abstract not available.")
_CONTRIBUTION = re.compile(
    r"\b(?:we (?:propose|present|introduce|develop|describe|show|find|demonstrate|report|investigate|conduct|"
    r"examine|evaluate|assess)\w*|our (?:main )?contributions?|in this (?:paper|work|study)|"
    r"(?:this|the present|the current) (?:paper|work|study)\b|here,? we|"
    r"the (?:objective|aim|purpose|goal)s? of (?:this|the present|the current) (?:paper|work|study))\b",
    re.IGNORECASE,
)
# a licence, a copyright line or a correspondence address a PDF's text runs into: never a gist
_BOILERPLATE = re.compile(
    r"licen[cs]|creative commons|copyright|©|correspond|competing interest|\bdoi\b|unrestricted use", re.IGNORECASE
)
_OPENING_SECTION = re.compile(r"(?:^|[^a-z])(?:introduction|background)(?:[^a-z]|$)", re.IGNORECASE)
_CLOSING_SECTION = re.compile(r"(?:^|[^a-z])(?:conclusions?|concluding remarks|summary)(?:[^a-z]|$)", re.IGNORECASE)
_SUMMING_UP = re.compile(r"(?:in summary|in conclusion|taken together|to conclude|overall),", re.IGNORECASE)
BODY_SENTENCES = 6  # of a conclusion, read at most


def poor_abstract(abstract: str | None) -> bool:
    """Whether an abstract is missing or says too little to summarise (fewer than ``POOR_ABSTRACT`` words)."""
    return len(as_data(abstract).split()) < POOR_ABSTRACT


def body_source(body: Sequence[tuple[str, str]]) -> str | None:
    """What a gist may be picked from in a paper's full text (``body``: its passages as (section, text), in order):
    the introduction's contribution sentences, else the conclusion's first sentences (or the discussion's "In
    summary, ..."); None when it has none of them."""
    opening = [as_data(t) for section, t in body if _OPENING_SECTION.search(section.split(" › ")[0])]
    said = [x for t in opening for x in split_sentences(t) if _CONTRIBUTION.search(x) and not _BOILERPLATE.search(x)]
    if said:
        return " ".join(said)
    closing = [as_data(t) for section, t in body if _CLOSING_SECTION.search(section.split(" › ")[0])]
    sentences = [x for t in closing for x in split_sentences(t) if not _BOILERPLATE.search(x)][:BODY_SENTENCES]
    if not sentences:  # no conclusion of its own: the discussion's sentences that sum the paper up
        discussion = [as_data(t) for section, t in body if section.split(" › ")[0].lower().endswith("discussion")]
        sentences = [x for t in discussion for x in split_sentences(t) if _SUMMING_UP.match(x)][:BODY_SENTENCES]
    return " ".join(sentences) or None


def summarize(
    abstract: str | None, tldr: str | None = None, *, limit: int = 300, body: Sequence[tuple[str, str]] = ()
) -> str | None:
    """The tldr when there is one; otherwise the most informative abstract sentences within ``limit``, each one
    that reads whole on its own (or right after the sentence it leans on); from the full text (``body``, its
    passages as (section, text), ``body_source``) when the abstract is missing or poor. All are text written by
    others: their markup, links and member tokens are dropped first."""
    tldr, abstract = as_data(tldr), as_data(abstract)
    if tldr:
        return _clip(tldr, limit)
    if body and poor_abstract(abstract):
        abstract = body_source(body) or abstract
    if not abstract:
        return None
    original = split_sentences(abstract)
    if not original:
        return None
    resolved = [resolve(x) for x in original]
    sentences = [speak_of_the_paper(x) for x in resolved]  # as they will read (said of the paper)
    alone = [stands_alone(o, s) for o, s in zip(original, sentences, strict=True)]

    def score(i: int) -> float:
        return _score(original[i], i) - (0.0 if alone[i] else LEANING_PENALTY)

    def size(chosen: list[int]) -> int:
        return sum(len(sentences[j]) + 1 for j in chosen) - 1

    whole = [i for i, x in enumerate(original) if not _BROKEN.search(x)]
    ranked = sorted(whole or range(len(original)), key=score, reverse=True)
    best = ranked[0]
    if len(sentences[best]) > limit:
        # a sentence that fits whole and says nearly as much reads better than the best one cut short
        fits = [i for i in ranked if len(sentences[i]) <= limit]
        if fits and score(fits[0]) >= score(best) - 1.5:
            best = fits[0]
        else:
            return _clip_at_clause(sentences[best], limit)
    chosen = [best]
    if not alone[best] and best > 0 and alone[best - 1] and size([best - 1, best]) <= limit:
        chosen = [best - 1, best]  # the sentence it leans on comes first
    follows = max(chosen) + 1  # a sentence that leans on the last one chosen reads well right after it

    def second(i: int) -> float:
        # what the paper did and found (after the sentence that says what it is) tells a member more than the
        # motivation before it ("The outbreak is wreaking havoc on the world ...")
        background = BACKGROUND_PENALTY if i < min(chosen) else 0.0
        return (_score(original[i], i) if i == follows else score(i)) - background

    for i in sorted(ranked, key=second, reverse=True):
        if i in chosen or not (alone[i] or i == follows):
            continue
        if size([*chosen, i]) <= limit:
            chosen.append(i)
            break
    order = sorted(chosen)
    # a sentence said of the paper ("It presents ...") after another one names the paper: "it" would seem to be
    # the subject of the sentence before ("The outbreak is spreading. It creates ..."); the abstract's own "It"
    # (which leans on the sentence before, and follows it) stays
    return " ".join(
        "The paper" + sentences[i][2:]
        if k > 0 and sentences[i].startswith("It ") and not resolved[i].startswith("It ")
        else sentences[i]
        for k, i in enumerate(order)
    )


# "we <verb>" at the start of an abstract sentence, said of the paper instead
PAPER_VERBS = {
    "present": "presents", "propose": "proposes", "introduce": "introduces", "describe": "describes",
    "develop": "develops", "study": "studies", "investigate": "investigates", "explore": "explores",
    "address": "addresses", "release": "releases", "design": "designs", "build": "builds",
    "analyze": "analyzes", "analyse": "analyses", "examine": "examines", "evaluate": "evaluates",
    "compare": "compares", "extend": "extends", "formulate": "formulates", "collect": "collects",
    "construct": "constructs", "create": "creates", "offer": "offers", "provide": "provides",
}  # fmt: skip
_AUTHOR_VERBS = ("show", "find", "demonstrate", "observe", "argue", "report", "prove", "confirm", "conclude")
_OPENING = re.compile(
    r"^(?:(?:in|with) this (?:paper|work|study|article)\s*,?\s*|here\s*,?\s*|to this end\s*,?\s*)?"
    r"we\s+(?:also\s+|further\s+|first\s+)?([a-z]+)\b",
    re.IGNORECASE,
)
_THIS_PAPER = re.compile(r"^(?:in\s+)?this (?:paper|work|study|article)\s+", re.IGNORECASE)


_JOINED_VERB = re.compile(r"^(,?\s+(?:and|or|and then)\s+)([a-z]+)\b")
_BASE_VERBS = frozenset(
    (*PAPER_VERBS, "apply", "test", "validate", "show", "demonstrate", "discuss", "report", "train", "use")
)


def _third_person(verb: str) -> str:
    """A verb of ``_BASE_VERBS`` as said of the paper ("evaluate" → "evaluates", "apply" → "applies"); any other
    word as it is (it was not a verb joined to the first)."""
    if verb not in _BASE_VERBS:
        return verb
    if verb in PAPER_VERBS:
        return PAPER_VERBS[verb]
    if verb.endswith("y"):
        return verb[:-1] + "ies"
    return verb + "es" if verb.endswith(("s", "sh", "ch", "x", "z")) else verb + "s"


def speak_of_the_paper(sentence: str) -> str:
    """An abstract sentence in the authors' voice ("We present ...", "In this paper, we show ...") said of
    the paper instead ("It presents ...", "The authors show ..."); any other sentence as it is."""
    m = _OPENING.match(sentence)
    if m:
        verb = m.group(1).lower()
        rest = sentence[m.end() :]
        if verb in PAPER_VERBS:
            # "We present and evaluate ..." : the verb joined to it is said of the paper too
            rest = _JOINED_VERB.sub(lambda j: f"{j.group(1)}{_third_person(j.group(2))}", rest, count=1)
            return f"It {PAPER_VERBS[verb]}{rest}"
        if verb in _AUTHOR_VERBS or verb.isalpha():
            # any other "we <verb>" reads as well of the authors ("We adapt ..." -> "The authors adapt ...")
            return f"The authors {verb}{rest}"
        return sentence
    m = _THIS_PAPER.match(sentence)
    if m and not sentence.lower().startswith("in "):
        return "It " + sentence[m.end() :]
    if sentence.lower().startswith("our results "):
        return "The results " + sentence[len("our results ") :]
    return sentence


def _clip_at_clause(text: str, limit: int) -> str:
    """Cut a long sentence at its last clause boundary (a comma, a semicolon, a colon) that keeps most of the
    room, else at a word."""
    head = text[: limit - 1]
    cut = max(head.rfind(", "), head.rfind("; "), head.rfind(": "))
    if cut >= 0.6 * limit:
        return head[:cut].rstrip() + "…"
    return _clip(text, limit)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"
