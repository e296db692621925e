"""Sequence labelling of sentences (CoNLL chunking, named entities, part-of-speech): a chain structural SVM
over CRF++-style template features, trained to a certified duality gap.

::

    from maxmargin.tagger import Tagger

    train = [[("He", "PRP"), ("reckons", "VBZ"), ("the", "DT"), ("deficit", "NN")], ...]
    tags = [["B-NP", "B-VP", "B-NP", "I-NP"], ...]
    tagger = Tagger(template="chunking").fit(train, tags)
    tagger.predict(train[:1])          # [["B-NP", "B-VP", "B-NP", "I-NP"]]
    tagger.evaluate(test, test_tags)   # conlleval's chunk precision, recall, F1 and the token accuracy

A token is a string (its word) or a tuple of its columns, the word first (``template="chunking"`` reads the
word and its part-of-speech tag). ``save`` writes the tagger file ``maxmargin predict`` reads, and
``Tagger.load`` reads one ``maxmargin train --task chain --format conll`` wrote.
"""

import numbers
from collections.abc import Iterable

from . import _core
from ._terms import errors_in
from .learners import _FLAGS, _learning, _Learner, _positive

__all__ = ["Tagger"]


def _rows(sentences):
    """Sentences as lists of tokens, each a list of its columns (strings)."""
    out = []
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str) or not isinstance(sentence, Iterable):
            raise ValueError(f"sentence {i}: a list of tokens, got {sentence!r}")
        tokens = []
        for j, token in enumerate(sentence):
            if isinstance(token, str):
                cells = [token]
            elif isinstance(token, Iterable):
                cells = list(token)
            else:
                cells = None
            if not cells or not all(isinstance(c, str) for c in cells):
                raise ValueError(f"sentence {i}, token {j}: a string or a tuple of strings, got {token!r}")
            tokens.append(cells)
        out.append(tokens)
    return out


def _tags(tags, originals=None):
    """Tags as strings, each a word without whitespace (a tagger file writes a tag per token on a line of
    columns). With a dict ``originals``, records each string's original value (an int tag predicts as an
    int); two values with one string (``1`` and ``"1"``) are refused."""
    out = []
    for i, sentence in enumerate(tags):
        if isinstance(sentence, str) or not isinstance(sentence, Iterable):
            raise ValueError(f"tags of sentence {i}: a list of tags, got {sentence!r}")
        these = []
        for j, t in enumerate(sentence):
            text = str(t)
            if not text or any(c.isspace() for c in text):
                raise ValueError(
                    f"sentence {i}, tag {j}: {t!r}; a tag is a word without whitespace (a tagger file "
                    "writes it as a column)"
                )
            if originals is not None:
                seen = originals.setdefault(text, t)
                if isinstance(seen, str) != isinstance(t, str) or not (seen is t or seen == t):
                    raise ValueError(
                        f"sentence {i}, tag {j}: {t!r} and {seen!r} are one tag as text; give tags of one "
                        "type"
                    )
            these.append(text)
        out.append(these)
    return out


def _nonempty(rows, tags=None):
    """The sentences that have tokens (and their tags): an empty sentence has nothing to tag or learn from.
    The tags of an empty sentence must be empty too."""
    if tags is not None:
        if len(tags) != len(rows):
            raise ValueError(f"{len(tags)} tag sequences for {len(rows)} sentences")
        # Checked here, before empty sentences are dropped, so the index is the caller's.
        for i, (sentence, these) in enumerate(zip(rows, tags)):
            if len(these) != len(sentence):
                raise ValueError(f"sentence {i}: {len(these)} tags for {len(sentence)} tokens")
        tags = [t for s, t in zip(rows, tags) if s]
    return [s for s in rows if s], tags


# The library's messages speak of CoNLL files (an input column per token, then the tag).
_TAGGER_FLAGS = _FLAGS + [(" (and the tag)", " per token")]


class Tagger(_Learner):
    """A CoNLL tagger: a chain model over template features.

    Parameters
    ----------
    template : str, default="auto"
        ``"chunking"`` (CoNLL-2000: word and POS columns), ``"ner"`` (the word and any further columns), a
        template file's path, or a template's text (CRF++'s ``U`` and ``B`` lines). ``"auto"`` chooses as the
        command does: ``"chunking"`` for tokens of two columns or more, ``"ner"`` for words alone.
    C : float, default=None
        ``½‖w‖² + C Σ_i ξ_i`` over sentences (``None``: the command's default, λ = 0.01).
    solver : {"bcfw", "oneslack", "nslack", "ssg"}, default="bcfw"
        The structural solver (see :mod:`maxmargin.learners`).
    max_iter, gap, verbose, n_jobs, random_state
        As the learners'.
    min_count : int, default=1
        Keep the features that fire at least this many times in the training tokens (CRFsuite's
        ``feature.minfreq``; the command's ``--min-count``).
    class_weight : dict or None, default=None
        Tag name to weight: a mistake at a token whose true tag is that tag costs the weight in the training
        loss (the weighted Hamming loss; the command's ``-w TAG=WEIGHT``). Other tags weigh 1.
    blocks : int, default=1
        With ``solver="bcfw"``: blocks of sentences stepped at once on ``n_jobs`` threads (the command's
        ``--blocks``; see :class:`~maxmargin.learners.FrankWolfeSSVM`).
    """

    def __init__(self, template="auto", C=None, solver="bcfw", max_iter=None, gap=None, verbose=0,
                 n_jobs=1, random_state=None, min_count=1, class_weight=None, blocks=1):
        self.template = template
        self.blocks = blocks
        self.min_count = min_count
        self.class_weight = class_weight
        self.C = C
        self.solver = solver
        self.max_iter = max_iter
        self.gap = gap
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _check(self):
        if self.C is not None and not _positive(self.C):
            raise ValueError(f"C={self.C!r}: give a positive finite number or None")
        self._check_budget()
        if isinstance(self.min_count, bool) or not isinstance(self.min_count, numbers.Integral) \
                or self.min_count < 1:
            raise ValueError(f"min_count={self.min_count!r}: give a whole number >= 1")
        if self.class_weight is not None:
            if not isinstance(self.class_weight, dict):
                raise ValueError(f"class_weight={self.class_weight!r}: give a dict from tag to weight, or None")
            for tag, w in self.class_weight.items():
                if isinstance(w, bool) or not isinstance(w, (int, float)) or not (0 <= w < float("inf")):
                    raise ValueError(f"class_weight[{tag!r}]={w!r}: give tag names and finite weights >= 0")

    def fit(self, sentences, tags):
        """Trains on sentences and their tags (one per token). An empty sentence (with no tags) is skipped:
        it has no token to learn from."""
        self._check()
        learning = _learning(self.solver, self.C, self.max_iter, None, self.gap, self.random_state, self.n_jobs,
                             self.verbose, "margin", self.blocks)
        originals = {}
        rows, tags = _nonempty(_rows(sentences), _tags(tags, originals))
        if not rows:
            raise ValueError("every sentence is empty: give sentences with tokens to train on")
        template = str(self.template)
        if template == "auto":
            template = "chunking" if min(len(t) for s in rows for t in s) >= 2 else "ner"
        with errors_in(_TAGGER_FLAGS):
            fitted, result = _core.fit_tagger(
                rows, tags, template, learning, min_count=int(self.min_count),
                class_weight=None if self.class_weight is None else
                {str(t): float(w) for t, w in self.class_weight.items()},
            )
        self._fitted = fitted
        # Tags given as other values than strings (ints) are given back as they were.
        self._tag_values = {k: v for k, v in originals.items() if not isinstance(v, str)}
        # Tagger.fit calls _record itself: the caller's line is three frames up.
        self._record(result, stacklevel=3)
        return self

    @property
    def tags_(self):
        """The tags the tagger knows."""
        return [self._tag_value(t) for t in self._fitted_model().tags]

    def _tag_value(self, text):
        return getattr(self, "_tag_values", {}).get(text, text)

    @property
    def w(self):
        raise AttributeError("a tagger's weights are over its feature dictionary: save it to inspect them")

    def _columns(self, rows):
        """Refuses tokens of fewer columns than training's: the templates read columns by position, and a
        missing one was read as absent without a word (more columns, as a trailing tag, are not read)."""
        expected = self._fitted_model().n_columns
        for i, sentence in enumerate(rows):
            for j, token in enumerate(sentence):
                if len(token) < expected:
                    raise ValueError(
                        f"sentence {i}, token {j}: {len(token)} column(s); this tagger was trained on tokens "
                        f"of {expected} (the word first), and its templates read them by position"
                    )

    def predict(self, sentences):
        """The tags of every sentence (``[]`` for an empty one)."""
        rows = _rows(sentences)
        self._columns(rows)
        fitted, nonempty = self._fitted_model(), _nonempty(rows)[0]
        tagged = iter(fitted.tag(nonempty) if nonempty else [])
        return [[self._tag_value(t) for t in next(tagged)] if sentence else [] for sentence in rows]

    def evaluate(self, sentences, tags):
        """conlleval's chunk precision, recall and F1, and the token accuracy, as a dict (empty sentences,
        with no tags, count for nothing). The chunk keys are ``None`` when a gold tag is not a chunk tag
        (``O``, ``B-X``, ``I-X``): the same keys whatever the tags."""
        rows = _rows(sentences)
        self._columns(rows)
        rows, tags = _nonempty(rows, _tags(tags))
        out = dict(self._fitted_model().evaluate(rows, tags))
        for key in ("chunk_precision", "chunk_recall", "chunk_f1"):
            out.setdefault(key, None)
        return out

    def score(self, sentences, tags):
        """The fraction of tokens tagged right (``evaluate`` gives the chunk F1)."""
        return self.evaluate(sentences, tags)["token_accuracy"]

    def save(self, path):
        """Writes the tagger file ``maxmargin predict`` reads (JSON for a ``.json`` path). The file holds tags
        as text: tags fitted as other values (ints) load back as their text."""
        self._fitted_model().save(str(path))

    @classmethod
    def load(cls, path):
        """A fitted tagger from a file written by ``save`` or by ``maxmargin train --task chain --format
        conll``; its certificate attributes are not restored."""
        out = cls()
        out._fitted = _core.TaggerModel.load(str(path))
        return out

    def __setstate__(self, state):
        data = state.pop("_fitted_bytes", None)
        self.__dict__.update(state)
        if data is not None:
            self._fitted = _core.TaggerModel.from_bytes(data)
