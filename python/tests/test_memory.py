"""Data without copies: a float64 CSR matrix is read in place, so a fit's peak memory grows by a small part of
the matrix, not by the matrix again; every other layout is converted once and trains the same model."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from maxmargin import MaxMarginClassifier

# Run in a process of its own, so that the peak measured is this fit's: Linux resets a process's peak resident
# size when 5 is written to /proc/self/clear_refs.
PEAK_SCRIPT = textwrap.dedent(
    """
    import ctypes, gc, sys
    import numpy as np
    import scipy.sparse as sp
    from maxmargin import MaxMarginClassifier

    def status(key):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        raise KeyError(key)

    n, d, per_row, k, copied = 100_000, 2_000, 40, int(sys.argv[1]), sys.argv[2] == "copied"
    rng = np.random.default_rng(0)
    cols = np.sort(rng.random((n, per_row)).argsort(axis=1)[:, :per_row] * (d // per_row)
                   + rng.integers(0, d // per_row, (n, per_row)), axis=1).astype(np.int32)
    X = sp.csr_matrix((rng.standard_normal(n * per_row), cols.ravel(), np.arange(0, n * per_row + 1, per_row)),
                      shape=(n, d))
    assert X.indices.dtype == np.int32 and X.has_canonical_format
    w = rng.standard_normal((d, k))
    y = np.asarray(X @ w).argmax(axis=1) if k > 2 else (np.asarray(X @ w[:, 0]) > 0).astype(int)
    del cols, w
    # A small fit first, so that the extension's pages and lazy imports are not counted; then the freed
    # temporaries are given back, so that a copy cannot hide in memory the process already holds.
    MaxMarginClassifier(max_iter=1).fit(X[:100], y[:100])
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    if copied:
        # The control: a matrix not known to be canonical is copied once (the test can see a copy).
        X.has_canonical_format = False
    before = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    MaxMarginClassifier(C=1.0, max_iter=3).fit(X, y)
    print(size, status("VmHWM") - before)
    """
)


def peak_growth(classes, copied=False):
    """`(bytes of the matrix, growth of the peak resident size during the fit)` of a 100,000-row fit (of a
    copy of the matrix when `copied`)."""
    out = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT, str(classes), "copied" if copied else "in-place"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    size, growth = (int(v) for v in out.stdout.split())
    return size, growth


@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK), reason="needs Linux's /proc/self/clear_refs")
@pytest.mark.parametrize("classes", [2, 3], ids=["binary", "one-vs-rest"])
def test_a_large_csr_fit_does_not_copy_the_matrix(classes):
    size, growth = peak_growth(classes)
    # The solver's own state is a few numbers a row (duals, norms, labels, an order), 40 nonzeros a row here:
    # about a fifth of the matrix. A copy of the matrix would be more than all of it.
    assert growth < 0.5 * size, f"the fit's peak grew by {growth / size:.2f} of the matrix's {size} bytes"


@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK), reason="needs Linux's /proc/self/clear_refs")
def test_the_measure_sees_a_copy():
    size, growth = peak_growth(2, copied=True)
    assert growth > 0.9 * size, f"a copied matrix raised the peak by {growth / size:.2f} of its {size} bytes"


def test_every_layout_trains_the_model_the_canonical_csr_matrix_trains():
    rng = np.random.default_rng(1)
    dense = rng.standard_normal((300, 12)) * (rng.random((300, 12)) < 0.4)
    y = (dense @ rng.standard_normal(12) > 0).astype(int)
    canonical = sp.csr_matrix(dense)
    assert canonical.indices.dtype == np.int32
    wide = canonical.copy()
    wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
    # The same rows with each row's entries reversed: scipy keeps them as given (not canonical).
    reversed_rows = sp.csr_matrix(
        (np.concatenate([canonical[i].data[::-1] for i in range(300)]),
         np.concatenate([canonical[i].indices[::-1] for i in range(300)]),
         canonical.indptr.copy()),
        shape=canonical.shape,
    )
    assert not reversed_rows.has_canonical_format
    kept = reversed_rows.indices.copy()
    reference = MaxMarginClassifier(random_state=3).fit(canonical, y).coef_
    layouts = {
        "int64 indices": wide,
        "unsorted indices": reversed_rows,
        "csc": canonical.tocsc(),
        "dense C": dense,
        "dense F": np.asfortranarray(dense),
        "float32": canonical.astype(np.float32),
    }
    for name, X in layouts.items():
        coef = MaxMarginClassifier(random_state=3).fit(X, y).coef_
        tol = 1e-6 if name == "float32" else 0.0
        np.testing.assert_allclose(coef, reference, rtol=tol, atol=tol, err_msg=name)
    # The caller's matrix is left as it was given.
    np.testing.assert_array_equal(reversed_rows.indices, kept)
