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

/// A chain over `T ≤ 3` tags with `K ≤ 2` states, `T_len ≤ 4` positions, `d ≤ 2` features.
fn latent_chain_case() -> impl Strategy<
    Value = (
        maxmargin_struct::LatentChainSpace,
        Vec<f64>,
        Vec<f64>,
        Vec<maxmargin_core::vector::SparseVec>,
        Vec<u32>,
    ),
> {
    (1..=3usize, 1..=2usize, 1..=2usize, 1..=4usize).prop_flat_map(|(t, k, d, len)| {
        let l = t * k;
        let dim = d * l + l * l + 2 * l;
        (
            cost(t),
            ints(dim, -2, 2),
            ints(dim, -2, 2),
            prop::collection::vec(sparse(d), len),
            prop::collection::vec(0..t as u32, len),
        )
            .prop_map(move |(c, w, z, x, y)| {
                let space = maxmargin_struct::LatentChainSpace::with_costs(d, c, k).unwrap();
                (space, w, z, x, y)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The latent chain's oracles are its joint chain's (against brute force), its loss reads the tags
    /// alone, and a completion is the best joint labelling with the observed tags.
    #[test]
    fn latent_chain_oracles_losses_and_completions(
        (space, w, z, x, y) in latent_chain_case(),
        seed in any::<u64>(),
    ) {
        let truth = space.initial(&x, &y, seed).unwrap();
        prop_assert_eq!(&space.label(&truth), &y);
        prop_assert_eq!(&space.initial(&x, &y, seed).unwrap(), &truth);
        check(&space, &w, &x, &truth, &z)?;
        let all = space.enumerate(&x).unwrap();
        // The loss of two joint labellings is that of their tags' first states.
        let first = |j: &Vec<u32>| -> Vec<u32> {
            space.label(j).iter().map(|t| t * space.states() as u32).collect()
        };
        for (a, b) in all.iter().zip(all.iter().rev()) {
            prop_assert_eq!(space.loss(a, b), space.loss(&first(a), &first(b)));
        }
        let h = space.complete(&w, &x, &y).unwrap();
        prop_assert_eq!(&space.label(&h), &y);
        let best = all
            .iter()
            .filter(|j| space.label(j) == y)
            .map(|j| space.score(&w, &x, j))
            .fold(f64::NEG_INFINITY, f64::max);
        prop_assert!((space.score(&w, &x, &h) - best).abs() < 1e-9);
    }
}
