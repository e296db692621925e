//! Approximate inference that bounds its answers (TRW-S, AD3 on graphs with cycles): the primal objective
//! summed from the bounds is never below the exact one, so every solver's gap from it is a certificate for
//! the integral problem; loopy max-product, which bounds nothing, can fall below.

use crate::structural::run;
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::SparseVec;
use maxmargin_optim::{BcfwParams, Budget, NSlackParams, OneSlackParams, StructProblem};
use maxmargin_struct::{CostMatrix, Graph, GraphSpace, Inference, OutputSpace};

/// Sixteen frustrated little graphs: a 3 × 3 grid with both diagonals of each square (triangles, so odd
/// cycles), 3 labels, 2 features, labels that follow the features with noise.
fn frustrated() -> (Vec<Graph>, Vec<Vec<u32>>) {
    let mut lcg = maxmargin_core::testing::Lcg::new(29);
    let mut next = || lcg.unit31();
    let mut edges = Vec::new();
    for r in 0..3u32 {
        for c in 0..3u32 {
            let i = r * 3 + c;
            if c < 2 {
                edges.push([i, i + 1]);
            }
            if r < 2 {
                edges.push([i, i + 3]);
            }
            if r < 2 && c < 2 {
                edges.push([i, i + 4]);
                edges.push([i + 1, i + 3]);
            }
        }
    }
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for _ in 0..16 {
        let (mut nodes, mut labels) = (Vec::new(), Vec::new());
        for _ in 0..9 {
            let f = [next() * 2.0 - 1.0, next() * 2.0 - 1.0];
            let label = if next() < 0.3 {
                (next() * 3.0) as u32 % 3
            } else {
                u32::from(f[0] > 0.0) + u32::from(f[1] > 0.3)
            };
            nodes.push(SparseVec::from_dense(&f).unwrap());
            labels.push(label);
        }
        xs.push(Graph::new(nodes, edges.clone()).unwrap());
        ys.push(labels);
    }
    (xs, ys)
}

fn space(inference: Inference) -> GraphSpace {
    GraphSpace::with_costs(2, 0, CostMatrix::zero_one(3).unwrap(), true, inference).unwrap()
}

#[test]
fn bounded_primals_are_never_below_the_exact_one() {
    let (x, y) = frustrated();
    let lambda = Lambda::new(0.1).unwrap();
    let exact = space(Inference::BruteForce);
    let reference = StructProblem::new(&exact, &x, &y, lambda).unwrap();
    let mut lcg = maxmargin_core::testing::Lcg::new(5);
    let mut below = 0;
    for round in 0..40 {
        // Repulsive and attractive tables of growing strength: frustrated triangles.
        let scale = 0.5 + round as f64 * 0.25;
        let w: Vec<f64> = (0..exact.dim())
            .map(|_| (lcg.unit31() * 2.0 - 1.0) * scale)
            .collect();
        let truth = reference.primal(&w).unwrap();
        for inference in [Inference::TRWS, Inference::AD3] {
            let s = space(inference);
            let p = StructProblem::new(&s, &x, &y, lambda).unwrap();
            let bounded = p.primal(&w).unwrap();
            assert!(
                bounded >= truth - 1e-9 * truth.abs().max(1.0),
                "{}: primal {bounded} below the exact {truth}",
                inference.name()
            );
        }
        let loopy = space(Inference::MAX_PRODUCT);
        let found = StructProblem::new(&loopy, &x, &y, lambda)
            .unwrap()
            .primal(&w)
            .unwrap();
        below += usize::from(found < truth - 1e-9);
    }
    // The bound matters: max-product's primal (no bound) fell below the exact one on some of these.
    assert!(below > 0, "max-product never missed a maximum here");
}

#[test]
fn gaps_with_trws_certify_the_integral_problem() {
    let (x, y) = frustrated();
    let lambda = Lambda::new(0.05).unwrap();
    let s = space(Inference::TRWS);
    let problem = StructProblem::new(&s, &x, &y, lambda).unwrap();
    let exact = space(Inference::BruteForce);
    let reference = StructProblem::new(&exact, &x, &y, lambda).unwrap();
    let check = |solver: &mut dyn FnMut() -> maxmargin_optim::Fit<Vec<f64>>| {
        let fit = solver();
        let last = fit.trace.last().unwrap();
        let (dual, gap) = (last.dual.unwrap(), last.gap.unwrap());
        // The exact primal at the weights returned lies between the dual and the dual plus the gap.
        let truth = reference.primal(&fit.output).unwrap();
        let tol = 1e-9 * truth.abs().max(1.0);
        assert!(
            dual <= truth + tol && truth <= dual + gap + tol,
            "{dual} {truth} {gap}"
        );
    };
    let budget = || Budget::epochs(30.0).evaluating_every(5.0);
    check(&mut || {
        run(
            &mut BcfwParams::default().check().unwrap(),
            &problem,
            budget(),
        )
    });
    check(&mut || {
        run(
            &mut OneSlackParams::default().check().unwrap(),
            &problem,
            budget(),
        )
    });
    check(&mut || {
        run(
            &mut NSlackParams::default().check().unwrap(),
            &problem,
            budget(),
        )
    });
}

/// Over ranks too: each of two thread ranks holds half the graphs, and BCFW, 1-slack and SSG over them end
/// with a gap that brackets the exact primal of all the graphs at the weights returned.
#[test]
fn gaps_with_trws_over_ranks_certify_the_integral_problem() {
    use maxmargin_optim::{Collective, SsgParams, ThreadRanks, Trainer};
    let (x, y) = frustrated();
    let lambda = Lambda::new(0.002).unwrap();
    let s = space(Inference::TRWS);
    let exact = space(Inference::BruteForce);
    let reference = StructProblem::new(&exact, &x, &y, lambda).unwrap();
    let n = x.len();
    let trainer = Trainer::new(Budget::epochs(30.0).evaluating_every(5.0)).unwrap();
    let mut beyond = 0.0;
    for solver in ["bcfw", "oneslack", "ssg"] {
        let fits = ThreadRanks::run(2, |comm| {
            let mine: Vec<usize> = (0..n).filter(|i| i % 2 == comm.rank()).collect();
            let xs: Vec<Graph> = mine.iter().map(|&i| x[i].clone()).collect();
            let ys: Vec<Vec<u32>> = mine.iter().map(|&i| y[i].clone()).collect();
            let p = StructProblem::new(&s, &xs, &ys, lambda)?;
            match solver {
                "bcfw" => {
                    let mut r = BcfwParams::default().check()?.over_ranks(comm, n);
                    trainer.run_over(comm, &mut r, &p, &mut ())
                }
                "oneslack" => {
                    let mut r = OneSlackParams::default().check()?.over_ranks(comm, n);
                    trainer.run_over(comm, &mut r, &p, &mut ())
                }
                _ => {
                    let mut r = SsgParams::default().check()?.over_ranks(comm, n);
                    trainer.run_over(comm, &mut r, &p, &mut ())
                }
            }
        });
        let fit = fits[0].as_ref().unwrap();
        let last = fit.trace.last().unwrap();
        let (dual, gap) = (last.dual.unwrap(), last.gap.unwrap());
        let truth = reference.primal(&fit.output).unwrap();
        let tol = 1e-9 * truth.abs().max(1.0);
        assert!(
            dual <= truth + tol && truth <= dual + gap + tol,
            "{solver}: {dual} {truth} {gap}"
        );
        // The objective reported is the bounded primal of all the graphs, as one process sums it.
        let whole = StructProblem::new(&s, &x, &y, lambda).unwrap();
        let bounded = whole.primal(&fit.output).unwrap();
        beyond += (whole.oracle_all(&fit.output).unwrap().iter())
            .map(|v| v.upper() - v.hinge)
            .sum::<f64>();
        assert!(
            (last.objective - bounded).abs() <= 1e-9 * bounded,
            "{solver}: {} against {bounded}",
            last.objective
        );
    }
    // At λ = 0.002 TRW-S leaves answers uncertified at the weights returned, so the bounds were needed.
    assert!(beyond > 1.0, "{beyond}");
}
