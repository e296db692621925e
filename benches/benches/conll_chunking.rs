//! CoNLL-2000 chunking with a chain structural SVM: the chunker feature templates of
//! `maxmargin::io::conll`, BCFW, λ = 10⁻³ (and a few others), and the chunk F1 of conlleval on the test set,
//! with the time to train; then #29's stand-in for a named-entity set of the CoNLL-2002 kind, a wide
//! template (`conll_wide.template`: word and POS n-grams, 864,494 features, 19 million weights) at the
//! default settings and at λ = 10⁻³, to the default certified 1% gap. First, a tagger's set-up: the
//! dictionary and the training rows in two passes (`FeatureMap::fit_with`, then `features` of each sentence)
//! against one (`FeatureMap::fit_with_rows`), on one and two threads. Needs `MAXMARGIN_DATA`. Writes
//! `target/bench-report/conll_chunking.md`.

use maxmargin::io::conll;
use maxmargin::io::svm_hmm::SequenceData;
use maxmargin::structured_svm::{Prediction, StructuredSvmParams, Task};
use maxmargin_benches::{data_dir, median, time};
use rayon::prelude::*;
use std::fmt::Write as _;

fn main() {
    let Some(dir) = data_dir() else {
        println!(
            "conll_chunking: set MAXMARGIN_DATA (or cargo xtask bench --data-dir DIR) to run it"
        );
        return;
    };
    let (Ok(train), Ok(test)) = (
        conll::read(&dir.join("conll2000/train.txt.gz")),
        conll::read(&dir.join("conll2000/test.txt.gz")),
    ) else {
        println!(
            "conll_chunking: CoNLL-2000 not found under {}",
            dir.display()
        );
        return;
    };
    let mut report = String::new();
    set_up(&train, &mut report);
    let (prep, map) = time(|| conll::FeatureMap::fit(&train));
    // The chunker: fixed pass budgets; the stand-in: the defaults (a certified 1% gap), λ as the CLI's.
    let budgets = [(1e-3, Some(10.0)), (1e-3, Some(30.0)), (1e-4, Some(10.0))];
    chunker(&train, &test, &map, prep, &budgets, &mut report);
    match conll::Template::parse("conll_wide.template", WIDE) {
        Ok(wide) => {
            let (prep, map) = time(|| conll::FeatureMap::fit_with(&train, wide));
            chunker(
                &train,
                &test,
                &map,
                prep,
                &[(1e-2, None), (1e-3, None)],
                &mut report,
            );
        }
        Err((line, col, m)) => println!("conll_wide.template, line {line}:{col}: {m}"),
    }
    println!("{report}");
    let out = maxmargin_benches::out_dir();
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("conll_chunking.md"), &report);
    }
}

/// A tagger's set-up with the chunking templates, in two passes and in one, on one and two threads: 7
/// interleaved rounds each, medians (the rows are checked equal).
fn set_up(train: &[conll::Sentence], report: &mut String) {
    let _ = writeln!(
        report,
        "## A tagger's dictionary and training rows ({} sentences)\n\n\
         | threads | two passes s | one pass s | ratio |\n|---|---|---|---|",
        train.len()
    );
    for threads in [1, 2] {
        let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(threads).build() else {
            continue;
        };
        let (mut two, mut one) = (Vec::new(), Vec::new());
        for _ in 0..7 {
            let (s, (map, rows)) = time(|| {
                pool.install(|| {
                    let map = conll::FeatureMap::fit_with(train, conll::Template::chunking());
                    let rows: Vec<_> = train.par_iter().map(|s| map.features(s)).collect();
                    (map, rows)
                })
            });
            two.push(s);
            let (s, (map1, rows1)) = time(|| {
                pool.install(|| {
                    conll::FeatureMap::fit_with_rows(train, conll::Template::chunking(), 1)
                })
            });
            one.push(s);
            assert!(map == map1 && rows == rows1, "one pass made other rows");
        }
        let (two, one) = (median(&mut two), median(&mut one));
        let _ = writeln!(
            report,
            "| {threads} | {two:.3} | {one:.3} | {:.2} |",
            one / two
        );
    }
    report.push('\n');
}

/// The stand-in's template (`maxmargin train --task chain --format conll --template
/// benches/benches/conll_wide.template train.txt.gz` trains the same model).
const WIDE: &str = include_str!("conll_wide.template");

/// Trains chains with `map`'s features at each `(λ, pass budget)` (no budget: the defaults, to the certified
/// gap) and appends a table of their test chunk F1.
fn chunker(
    train: &[conll::Sentence],
    test: &[conll::Sentence],
    map: &conll::FeatureMap,
    prep: f64,
    settings: &[(f64, Option<f64>)],
    report: &mut String,
) {
    let to_data = |s: &[conll::Sentence]| SequenceData {
        sequences: s.iter().map(|s| map.features(s)).collect(),
        // Every test tag occurs in training; an unknown one would be scored as tag 0 (a mistake).
        labels: s
            .iter()
            .map(|s| map.tags(s).unwrap_or_else(|_| vec![0; s.len()]))
            .collect(),
        qids: (0..s.len() as u64).collect(),
        n_features: map.n_features(),
        n_labels: map.n_tags(),
        source: "conll2000".into(),
    };
    let (tr, te) = (to_data(train), to_data(test));
    let gold: Vec<Vec<String>> = test.iter().map(|s| s.tags.clone()).collect();
    let names = map.tag_names();
    let _ = write!(
        report,
        "# CoNLL-2000 chunking, chain SSVM with BCFW: template {}\n\n{} training sentences, {} test sentences, {} features, {} tags; \
         the feature dictionary took {prep:.1} s.\n\n\
         | λ | passes | train seconds | primal | gap | chunk F1 | precision | recall |\n|---|---|---|---|---|---|---|---|\n",
        map.template().name(),
        train.len(),
        test.len(),
        map.n_features(),
        map.n_tags()
    );
    for &(lambda, passes) in settings {
        let mut params = StructuredSvmParams::new(Task::Chain).lambda(lambda);
        if let Some(passes) = passes {
            params = params.max_passes(passes).epsilon(0.01);
            params.eval_every = Some(passes);
        }
        let Ok(svm) = params.check() else { continue };
        let (secs, fit) = time(|| svm.fit_chain(&tr, &mut ()));
        let Ok(fit) = fit else { continue };
        let Ok(preds) = fit.model.predict_chain(&te) else {
            continue;
        };
        let pred: Vec<Vec<String>> = preds
            .iter()
            .map(|p| match p {
                Prediction::Tags(t) => t.iter().map(|&k| names[k as usize - 1].clone()).collect(),
                _ => Vec::new(),
            })
            .collect();
        let s = conll::chunk_score(&gold, &pred);
        let _ = writeln!(
            report,
            "| {lambda:e} | {:.0} | {secs:.1} | {:.4} | {} | {:.4} | {:.4} | {:.4} |",
            fit.model.training.passes,
            fit.model.training.objective,
            fit.model
                .training
                .gap
                .map_or("-".into(), |g| format!("{g:.3}")),
            s.f1,
            s.precision,
            s.recall
        );
    }
    report.push('\n');
}
