"""The cost of an output space written in Python: the same multiclass model trained by the same solver once
through Python callbacks (maxmargin.models.StructuredModel) and once in Rust (MultiClassClf), side by side.

Usage: python python/benchmarks/custom_space.py [--rows 2000] [--passes 20] [--repeat 3]

Both runs make the same number of passes (a gap target they cannot reach, so the pass budget stops them).
The Python model counts its callbacks; the overhead per callback is the difference of the two fit times over
that count. Prints a Markdown table. Machines are shared and noisy: the ratio, measured in one run, is the
claim.
"""

import argparse
import time
import warnings

import numpy as np

from maxmargin.learners import FrankWolfeSSVM
from maxmargin.models import MultiClassClf, StructuredModel


class PythonMulticlass(StructuredModel):
    """Crammer and Singer's multiclass model with a bias feature, as MultiClassClf is in Rust."""

    def __init__(self, n_classes):
        self.n_classes = n_classes
        self.calls = 0

    def initialize(self, X, Y):
        self.n_features = len(X[0]) + 1
        self.size_joint_feature = self.n_classes * self.n_features

    def joint_feature(self, x, y):
        self.calls += 1
        psi = np.zeros(self.size_joint_feature)
        psi[y * self.n_features:(y + 1) * self.n_features] = np.append(x, 1.0)
        return psi

    def _scores(self, x, w):
        return w.reshape(self.n_classes, self.n_features) @ np.append(x, 1.0)

    def inference(self, x, w):
        self.calls += 1
        return int(np.argmax(self._scores(x, w)))

    def loss_augmented_inference(self, x, y, w):
        self.calls += 1
        scores = self._scores(x, w) + 1.0
        scores[y] -= 1.0
        return int(np.argmax(scores))

    def loss(self, y, y_hat):
        self.calls += 1
        return float(y != y_hat)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--passes", type=float, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    k, d = 5, 20
    centres = rng.normal(0.0, 2.0, size=(k, d))
    y = rng.integers(k, size=args.rows)
    X = centres[y] + rng.normal(size=(args.rows, d))
    warnings.simplefilter("ignore")
    best = {"python": np.inf, "rust": np.inf}
    calls = 0
    for _ in range(args.repeat):
        model = PythonMulticlass(k)
        t = time.perf_counter()
        ours = FrankWolfeSSVM(model, C=1.0, max_iter=args.passes, gap=1e-12, n_jobs=1).fit(list(X), list(y))
        best["python"] = min(best["python"], time.perf_counter() - t)
        calls = model.calls
        t = time.perf_counter()
        rust = FrankWolfeSSVM(MultiClassClf(), C=1.0, max_iter=args.passes, gap=1e-12, n_jobs=1).fit(X, y)
        best["rust"] = min(best["rust"], time.perf_counter() - t)
    per_call = (best["python"] - best["rust"]) / calls
    print(f"# A Python-defined output space against the same model in Rust ({args.rows} rows, {k} classes, "
          f"{d} features, {args.passes:g} BCFW passes, best of {args.repeat})\n")
    print("| model | fit s | ratio | callbacks | overhead per callback | objective |")
    print("|---|---|---|---|---|---|")
    print(f"| Python StructuredModel | {best['python']:.3f} | {best['python'] / best['rust']:.1f}x | {calls:,} | "
          f"{per_call * 1e6:.1f} µs | {ours.objective_:.6g} |")
    print(f"| MultiClassClf (Rust) | {best['rust']:.3f} | 1.0x | - | - | {rust.objective_:.6g} |")


if __name__ == "__main__":
    main()
