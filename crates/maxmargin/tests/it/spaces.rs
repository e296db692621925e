//! The shared datasets load into the structured spaces, and a user's own space plugs in.

use maxmargin::core::vector::SparseVec;
use maxmargin::io::libsvm::ClassLabels;
use maxmargin::structured::{
    BruteForce, ChainSpace, Enumerable, MulticlassSpace, MultilabelSpace, OutputSpace, StructError,
    Violation,
};
use std::path::PathBuf;

fn data_dir() -> Option<PathBuf> {
    maxmargin::testing::shared_data(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn datasets_load_into_their_spaces() {
    let Some(dir) = data_dir() else { return };
    // OCR: chains of 128 pixels, 26 letters.
    let ocr = maxmargin::io::svm_hmm::read(&dir.join("ocr_letters/ocr.fold0.svmhmm.gz")).unwrap();
    let chain = ChainSpace::new(ocr.n_features, 26).unwrap();
    let w = vec![0.0; chain.dim()];
    for (x, y) in ocr.sequences.iter().zip(&ocr.labels) {
        chain.check_input(x).unwrap();
        chain.check_output(x, y).unwrap();
        // With w = 0 every labelling scores 0, so the hinge is the largest loss: every position wrong.
        assert_eq!(
            chain.loss_augmented(&w, x, y).unwrap().hinge,
            y.len() as f64
        );
    }
    // letter and pendigits: multiclass.
    for file in ["letter/letter.scale.gz", "pendigits/pendigits"] {
        let data = maxmargin::io::libsvm::read(&dir.join(file)).unwrap();
        let classes = ClassLabels::from_labels(&data.source, &data.labels).unwrap();
        let y = classes.indices(&data).unwrap();
        let space = MulticlassSpace::new(data.x.n_features(), classes.len()).unwrap();
        let w = vec![0.0; space.dim()];
        for (row, yi) in data.x.rows().zip(&y).take(500) {
            let x = row.to_owned();
            space.check_output(&x, yi).unwrap();
            assert_eq!(space.loss_augmented(&w, &x, yi).unwrap().hinge, 1.0);
        }
    }
    // yeast and scene: multilabel.
    for file in ["yeast/yeast.train.libsvm.gz", "scene/scene.train.libsvm.gz"] {
        let data = maxmargin::io::multilabel::read(&dir.join(file)).unwrap();
        let l = maxmargin::io::multilabel::n_labels(&data);
        let ys = maxmargin::io::multilabel::indicators(&data.labels, l);
        let space = MultilabelSpace::new(data.x.n_features(), l).unwrap();
        let w = vec![0.0; space.dim()];
        for (row, y) in data.x.rows().zip(&ys).take(200) {
            let x = row.to_owned();
            space.check_input(&x).unwrap();
            // Each label is flipped (the loss 1 beats a score of 0): the hinge is L.
            assert_eq!(space.loss_augmented(&w, &x, y).unwrap().hinge, l as f64);
        }
    }
}

/// A user's own space: ordinal regression on 0..K with Δ = |y − y′| and ψ(x, y) = [x·y, e_y] (a shared slope
/// and one offset per level). Its oracle is a loop over the K levels; brute force checks it.
struct Ordinal {
    d: usize,
    k: u32,
}

impl OutputSpace for Ordinal {
    type Input = SparseVec;
    type Output = u32;
    fn dim(&self) -> usize {
        self.d + self.k as usize
    }
    fn check_input(&self, _x: &SparseVec) -> Result<(), StructError> {
        Ok(())
    }
    fn check_output(&self, _x: &SparseVec, y: &u32) -> Result<(), StructError> {
        if *y < self.k {
            Ok(())
        } else {
            Err(StructError::LabelOutOfRange {
                position: 0,
                label: *y,
                n_labels: self.k as usize,
            })
        }
    }
    fn for_each_feature(&self, x: &SparseVec, y: &u32, visit: &mut dyn FnMut(usize, f64)) {
        x.as_row()
            .iter()
            .for_each(|(j, v)| visit(j, f64::from(*y) * v));
        visit(self.d + *y as usize, 1.0);
    }
    fn loss(&self, y: &u32, y_hat: &u32) -> f64 {
        f64::from(y.abs_diff(*y_hat))
    }
    fn decode(&self, w: &[f64], x: &SparseVec) -> Result<u32, StructError> {
        Ok((0..self.k)
            .map(|l| (l, self.score(w, x, &l)))
            .fold((0, f64::NEG_INFINITY), |b, c| if c.1 > b.1 { c } else { b })
            .0)
    }
    fn loss_augmented(
        &self,
        w: &[f64],
        x: &SparseVec,
        y: &u32,
    ) -> Result<Violation<u32>, StructError> {
        self.check_output(x, y)?;
        let best = (0..self.k)
            .map(|l| (l, self.score(w, x, &l) + self.loss(y, &l)))
            .fold((0, f64::NEG_INFINITY), |b, c| if c.1 > b.1 { c } else { b });
        Ok(self.violation(w, x, y, best.0))
    }
}

impl Enumerable for Ordinal {
    fn enumerate(&self, _x: &SparseVec) -> Result<Vec<u32>, StructError> {
        Ok((0..self.k).collect())
    }
}

#[test]
fn a_users_space_plugs_in_and_matches_brute_force() {
    let space = Ordinal { d: 2, k: 5 };
    let x = SparseVec::from_dense(&[1.0, -0.5]).unwrap();
    for (w, y) in [
        (vec![0.3, 0.1, 0.0, 0.2, -0.1, 0.0, 0.4], 2u32),
        (vec![-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 4),
        (vec![0.0; 7], 0),
    ] {
        let ours = space.loss_augmented(&w, &x, &y).unwrap();
        let reference = BruteForce(Ordinal { d: 2, k: 5 })
            .loss_augmented(&w, &x, &y)
            .unwrap();
        assert!((ours.hinge - reference.hinge).abs() < 1e-12);
        assert_eq!(ours.output, reference.output);
        assert!(space.loss(&y, &space.decode(&w, &x).unwrap()) <= ours.hinge + 1e-12);
    }
}
