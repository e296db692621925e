//! The latent multiclass space: its oracles are those of its joint space (checked against brute force), its
//! loss ignores the templates, and a completion is the best template of the example's own class.

use crate::brute_force::{check, cost, ints, sparse};
use maxmargin_struct::{Enumerable, LatentMulticlassSpace, LatentSpace, OutputSpace};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn oracles_losses_and_completions(
        (k, s, d) in (1..=3usize, 1..=3usize, 1..=3usize),
        c in cost(3),
        w in ints(27, -2, 2),
        z in ints(27, -2, 2),
        x in sparse(3),
        y in 0..3u32,
        seed in any::<u64>(),
    ) {
        let c = maxmargin_struct::CostMatrix::from_fn(k, |a, b| c.cost(a, b)).unwrap();
        let space = LatentMulticlassSpace::with_costs(d, c.clone(), s).unwrap();
        let x = maxmargin_core::vector::SparseVec::from_dense(&x.as_row().to_dense(3)[..d]).unwrap();
        let (w, z) = (&w[..k * s * d], &z[..k * s * d]);
        let y = y % k as u32;
        let truth = space.initial(&x, &y, seed).unwrap();
        prop_assert_eq!(space.label(&truth), y);
        prop_assert_eq!(space.initial(&x, &y, seed).unwrap(), truth);
        check(&space, w, &x, &truth, z)?;
        for (a, b) in space.enumerate(&x).unwrap().iter().zip(space.enumerate(&x).unwrap().iter().rev()) {
            let want = c.cost(space.label(a) as usize, space.label(b) as usize);
            prop_assert_eq!(space.loss(a, b), want);
        }
        let h = space.complete(w, &x, &y).unwrap();
        prop_assert_eq!(space.label(&h), y);
        for j in 0..s as u32 {
            let other = y * s as u32 + j;
            prop_assert!(space.score(w, &x, &h) >= space.score(w, &x, &other));
            if space.score(w, &x, &h) == space.score(w, &x, &other) {
                prop_assert!(h <= other, "ties go to the first template");
            }
        }
        prop_assert!(space.complete(w, &x, &(k as u32)).is_err());
    }
}
