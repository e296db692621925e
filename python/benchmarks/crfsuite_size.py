"""Model size beside CRFsuite's for the same features: the chunking templates of ``maxmargin train --format
conll`` (``Template::chunking``) written out as CRFsuite attributes, CRFsuite (python-crfsuite, L-BFGS, L2)
trained with ``feature.minfreq`` N, and the model file's size and feature count beside maxmargin's tagger
trained with ``--min-count N`` (the command given by ``--maxmargin``).

Rerun: ``python python/benchmarks/crfsuite_size.py --data-dir ../shared/data --maxmargin target/release/maxmargin``
in a venv with python-crfsuite.
"""

import argparse
import gzip
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pycrfsuite


def read(path):
    sentences, words = [], []
    with gzip.open(path, "rt") as f:
        for line in f:
            cells = line.split()
            if not cells:
                if words:
                    sentences.append(words)
                words = []
                continue
            words.append(cells)
    if words:
        sentences.append(words)
    return sentences


def shape(word):
    out = []
    for ch in word:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def attributes(sentence, t):
    """The chunking templates' strings at token t (as maxmargin's Template::chunking makes them)."""

    def cell(o, c):
        i = t + o
        if i < 0:
            return "<s>"
        if i >= len(sentence):
            return "</s>"
        return sentence[i][c]

    out = ["Ub"]
    for o in range(-2, 3):
        w = cell(o, 0)
        out += [f"Uw{o}:{w}", f"Ul{o}:{w.lower()}", f"Us{o}:{shape(w)}", f"Up{o}:{cell(o, 1)}"]
    lower = sentence[t][0].lower()
    for k in range(1, 5):
        if len(lower) >= k:
            out += [f"Upre{k}:{lower[:k]}", f"Usuf{k}:{lower[-k:]}"]
    out += [f"Upp-1:{cell(-1, 1)}|{cell(0, 1)}", f"Upp+1:{cell(0, 1)}|{cell(1, 1)}"]
    # CRFsuite reads ':' as the attribute's weight separator.
    return [a.replace("\\", "\\\\").replace(":", "\\:") for a in out]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", default=os.environ.get("MAXMARGIN_DATA", "../shared/data"))
    parser.add_argument("--maxmargin", default="target/release/maxmargin")
    parser.add_argument("--min-count", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--iterations", type=int, default=100)
    args = parser.parse_args()
    data = Path(args.data_dir) / "conll2000"
    train = read(data / "train.txt.gz")
    print("| min count | CRFsuite features | CRFsuite file | CRFsuite s | maxmargin features x tags | "
          "maxmargin file | maxmargin / CRFsuite |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.min_count:
            trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
            for s in train:
                trainer.append([attributes(s, t) for t in range(len(s))], [w[-1] for w in s])
            trainer.set_params({"feature.minfreq": n, "max_iterations": args.iterations, "c2": 1.0})
            crf = Path(tmp) / f"crf{n}.model"
            start = time.perf_counter()
            trainer.train(str(crf))
            seconds = time.perf_counter() - start
            info = pycrfsuite.Tagger()
            info.open(str(crf))
            crf_pairs = len(info.info().state_features)
            ours = Path(tmp) / f"mm{n}.mm"
            out = subprocess.run(
                [args.maxmargin, "train", str(data / "train.txt.gz"), "--task", "chain", "--format", "conll",
                 "--lambda", "1e-3", "--max-passes", "10", "--min-count", str(n), "-o", str(ours)],
                capture_output=True, text=True, check=True,
            )
            said = next(line for line in out.stderr.splitlines() if line.startswith("templates:"))
            features = int(said.split("; ")[1].split(" ")[0])
            tags = int(said.split(", ")[-1].split(" ")[0])
            size = os.path.getsize(ours)
            print(f"| {n} | {crf_pairs} attribute-tag pairs | {os.path.getsize(crf) / 1e6:.1f} MB | {seconds:.1f} | "
                  f"{features} x {tags} | {size / 1e6:.1f} MB | {size / os.path.getsize(crf):.2f} |")


if __name__ == "__main__":
    main()
