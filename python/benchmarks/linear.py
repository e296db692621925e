"""MaxMarginClassifier against scikit-learn's LinearSVC and LogisticRegression, side by side in one run.

Usage: python python/benchmarks/linear.py --data-dir ../shared/data [--repeat 3]

Reads a9a (LIBSVM, train and test) as CSR. For each pair, the same objective at the same C and LIBLINEAR's
tolerance ε (``tol``): the hinge (LinearSVC(loss="hinge", dual=True)) and the logistic loss
(LogisticRegression(solver="liblinear", dual=True)), intercepts fitted. Prints a Markdown table: fit seconds
(the best of --repeat runs), the ratio to scikit-learn's, the primal objective in C's units, test accuracy,
and predict throughput. Machines are shared and noisy: the ratios, measured in one run, are the claim.
"""

import argparse
import os
import time

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from maxmargin import MaxMarginClassifier


def objective(clf, X, y, C, loss):
    """½‖w‖² + ½b² + C Σ ℓ: LIBLINEAR's primal with the intercept a regularized feature."""
    z = np.where(y == clf.classes_[1], 1.0, -1.0) * clf.decision_function(X)
    w = np.append(clf.coef_.ravel(), clf.intercept_)
    losses = np.maximum(0.0, 1.0 - z) if loss == "hinge" else np.logaddexp(0.0, -z)
    return 0.5 * w @ w + C * losses.sum()


def best_time(make, X, y, repeat):
    best, clf = np.inf, None
    for _ in range(repeat):
        clf = make()
        start = time.perf_counter()
        clf.fit(X, y)
        best = min(best, time.perf_counter() - start)
    return best, clf


def predict_rate(clf, X, repeat):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        clf.predict(X)
        best = min(best, time.perf_counter() - start)
    return X.shape[0] / best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("MAXMARGIN_DATA", "../shared/data"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    train = os.path.join(args.data_dir, "a9a", "a9a.gz")
    test = os.path.join(args.data_dir, "a9a", "a9a.t.gz")
    X, y = load_svmlight_file(train, n_features=123)
    Xt, yt = load_svmlight_file(test, n_features=123)
    # LIBLINEAR's wrappers take 32-bit indices only.
    for m in (X, Xt):
        m.indices, m.indptr = m.indices.astype(np.int32), m.indptr.astype(np.int32)
    C, tol = 1.0, 0.1
    pairs = [
        (
            "hinge",
            lambda: MaxMarginClassifier(C=C, tol=tol),
            lambda: LinearSVC(C=C, loss="hinge", dual=True, tol=tol, intercept_scaling=1.0, max_iter=100_000),
        ),
        (
            "logistic",
            lambda: MaxMarginClassifier(C=C, tol=tol, loss="logistic"),
            lambda: LogisticRegression(C=C, solver="liblinear", dual=True, tol=tol, max_iter=100_000),
        ),
    ]
    print("| loss | estimator | fit s | × scikit-learn | objective | test accuracy | predictions / s |")
    print("|---|---|---|---|---|---|---|")
    for loss, ours, theirs in pairs:
        t_theirs, m_theirs = best_time(theirs, X, y, args.repeat)
        t_ours, m_ours = best_time(ours, X, y, args.repeat)
        for name, t, m in [("maxmargin", t_ours, m_ours), (type(m_theirs).__name__, t_theirs, m_theirs)]:
            print(
                f"| {loss} | {name} | {t:.3f} | {t / t_theirs:.2f} | {objective(m, X, y, C, loss):.2f} | "
                f"{m.score(Xt, yt):.4f} | {predict_rate(m, Xt, args.repeat):.3g} |"
            )


if __name__ == "__main__":
    main()
