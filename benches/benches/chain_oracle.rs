//! Loss-augmented Viterbi on OCR-sized chains (T ≈ 8, L = 26, d = 128) and CoNLL-sized chains (T ≈ 24,
//! L = 22, sparse features): calls per second, and allocations per call counted by a wrapping allocator,
//! to show the cost is the dynamic program and the dot products, not allocation. Real data when
//! `MAXMARGIN_DATA` has it, a synthetic stand-in of the same shape otherwise. Writes
//! `target/bench-report/chain_oracle.md`.

use maxmargin::core::vector::SparseVec;
use rand::SeedableRng;

/// The benchmark's seeded stream (the generator maxmargin's solvers use).
fn rng(seed: u64) -> rand_chacha::ChaCha8Rng {
    rand_chacha::ChaCha8Rng::seed_from_u64(seed)
}
use maxmargin::structured::{ChainSpace, OutputSpace};
use maxmargin_benches::{data_dir, median, time};
use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls. (The workspace forbids unsafe
// code in its crates; this bench binary is the one place that needs it, to count allocations.)
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

type Chains = (String, usize, usize, Vec<Vec<SparseVec>>, Vec<Vec<u32>>);

fn ocr() -> Chains {
    if let Some(d) = data_dir()
        .and_then(|d| maxmargin::io::svm_hmm::read(&d.join("ocr_letters/ocr.fold0.svmhmm.gz")).ok())
    {
        return ("ocr fold 0".into(), 128, 26, d.sequences, d.labels);
    }
    synthetic("synthetic ocr-like", 626, 8, 26, 128, 30)
}

fn conll() -> Chains {
    let real = data_dir().and_then(|d| {
        let train = maxmargin::io::conll::read(&d.join("conll2000/train.txt.gz")).ok()?;
        let map = maxmargin::io::conll::FeatureMap::fit(&train);
        let seqs: Vec<Vec<SparseVec>> = train.iter().take(2000).map(|s| map.features(s)).collect();
        let tags: Vec<Vec<u32>> = train
            .iter()
            .take(2000)
            .map(|s| map.tags(s).unwrap_or_default())
            .collect();
        Some((
            "conll2000 train (2,000 sentences)".to_string(),
            map.n_features(),
            map.n_tags(),
            seqs,
            tags,
        ))
    });
    real.unwrap_or_else(|| synthetic("synthetic conll-like", 2000, 24, 22, 100_000, 30))
}

fn synthetic(name: &str, n: usize, t: usize, l: usize, d: usize, nnz: usize) -> Chains {
    use rand::Rng;
    let mut r = rng(7);
    let seqs = (0..n)
        .map(|_| {
            (0..t)
                .map(|_| {
                    let mut idx: Vec<u32> = (0..nnz).map(|_| r.random_range(0..d as u32)).collect();
                    idx.sort_unstable();
                    idx.dedup();
                    let val = vec![1.0; idx.len()];
                    SparseVec::new(idx, val).unwrap_or_default()
                })
                .collect()
        })
        .collect();
    let labels = (0..n)
        .map(|_| (0..t).map(|_| r.random_range(0..l as u32)).collect())
        .collect();
    (name.into(), d, l, seqs, labels)
}

fn main() {
    use rand::Rng;
    let mut report =
        String::from("# Loss-augmented Viterbi\n\nMedians of 9 rounds over every sequence.\n\n");
    report.push_str("| data | sequences | mean T | L | d | mean nnz/position | loss-augmented calls/s | decode calls/s | allocations per call | µs per call | T·L² per call |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (name, d, l, seqs, labels) in [ocr(), conll()] {
        let Ok(space) = ChainSpace::new(d, l) else {
            continue;
        };
        let mut r = rng(3);
        let w: Vec<f64> = (0..space.dim())
            .map(|_| r.random_range(-1.0..1.0))
            .collect();
        let n = seqs.len();
        let tokens: usize = seqs.iter().map(Vec::len).sum();
        let nnz: usize = seqs.iter().flatten().map(|x| x.as_row().nnz()).sum();
        let (mut la, mut dec) = (Vec::new(), Vec::new());
        let mut allocs = 0;
        for _ in 0..9 {
            let before = ALLOCATIONS.load(Ordering::Relaxed);
            let (secs, _) = time(|| {
                for (x, y) in seqs.iter().zip(&labels) {
                    black_box(space.loss_augmented(&w, x, y).ok());
                }
            });
            allocs = ALLOCATIONS.load(Ordering::Relaxed) - before;
            la.push(secs);
            let (secs, _) = time(|| {
                for x in &seqs {
                    black_box(space.decode(&w, x).ok());
                }
            });
            dec.push(secs);
        }
        let (la, dec) = (median(&mut la), median(&mut dec));
        let mean_t = tokens as f64 / n as f64;
        let _ = writeln!(
            report,
            "| {name} | {n} | {mean_t:.1} | {l} | {d} | {:.1} | {:.0} | {:.0} | {:.2} | {:.2} | {:.0} |",
            nnz as f64 / tokens as f64,
            n as f64 / la,
            n as f64 / dec,
            allocs as f64 / n as f64,
            la / n as f64 * 1e6,
            mean_t * (l * l) as f64
        );
    }
    report.push_str("\nThe one allocation per call is the returned labelling; the tables are per-thread scratch.\n");
    println!("{report}");
    let dir = maxmargin_benches::out_dir();
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join("chain_oracle.md"), &report);
    }
}
