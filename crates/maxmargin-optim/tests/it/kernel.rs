//! Kernel SVMs by SMO against clarabel solving the same dual QP (`min ½αᵀQα − Σα`, `0 ≤ α ≤ U`, `yᵀα = 0`), on
//! small random problems with the degenerate shapes mixed in: empty rows, a row duplicated with the opposite
//! label, a class present once, zero-weight rows. SMO stops by its own rule, its certified gap is honest
//! (its dual never exceeds the optimum) and its dual matches clarabel's.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus, ZeroConeT,
};
use maxmargin_core::kernel::Kernel;
use maxmargin_core::objective::Lambda;
use maxmargin_core::vector::SparseRows;
use maxmargin_optim::{Budget, KernelProblem, SmoParams, Solver, StopReason, Trainer};
use proptest::prelude::*;

/// The optimal λ-form dual value by clarabel, or `None` when clarabel reports that it could not reach its
/// tolerances (`InsufficientProgress` on an ill-conditioned instance: CI once drew a cubic kernel on rows
/// scaled by 0.1 with λ = 1e-3), so the reference itself is unknown.
fn try_reference(
    x: &SparseRows,
    y: &[f64],
    upper: &[f64],
    kernel: Kernel,
    lambda: f64,
) -> Option<f64> {
    let n = y.len();
    let q = |i: usize, j: usize| y[i] * y[j] * kernel.eval(x.row(i), x.row(j));
    let (mut colptr, mut rowval, mut nzval) = (vec![0usize], Vec::new(), Vec::new());
    for j in 0..n {
        for i in 0..=j {
            rowval.push(i);
            nzval.push(q(i, j));
        }
        colptr.push(rowval.len());
    }
    let p = CscMatrix::new(n, n, colptr, rowval, nzval);
    let lin = vec![-1.0; n];
    // Row 0: yᵀα = 0; rows 1..=n: −α ≤ 0; rows n+1..=2n: α ≤ U.
    let (mut colptr, mut rowval, mut nzval) = (vec![0usize], Vec::new(), Vec::new());
    for (j, &yj) in y.iter().enumerate() {
        rowval.extend([0, 1 + j, 1 + n + j]);
        nzval.extend([yj, -1.0, 1.0]);
        colptr.push(rowval.len());
    }
    let a = CscMatrix::new(1 + 2 * n, n, colptr, rowval, nzval);
    let mut b = vec![0.0; 1 + n];
    b.extend_from_slice(upper);
    let cones = [ZeroConeT(1), NonnegativeConeT(2 * n)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_iter(300)
        .tol_gap_abs(1e-10)
        .tol_gap_rel(1e-10)
        .tol_feas(1e-10)
        .build()
        .unwrap();
    let mut solver = DefaultSolver::new(&p, &lin, &a, &b, &cones, settings).unwrap();
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {
            Some(-lambda * solver.solution.obj_val)
        }
        SolverStatus::InsufficientProgress => None,
        other => panic!("clarabel: {other:?}"),
    }
}

/// [`try_reference`] where the instance is well conditioned and clarabel must solve it.
fn reference(x: &SparseRows, y: &[f64], upper: &[f64], kernel: Kernel, lambda: f64) -> f64 {
    try_reference(x, y, upper, kernel, lambda).expect("clarabel solves the reference QP")
}

fn problem(seed: u64, n: usize, d: usize, scale: f64) -> (SparseRows, Vec<f64>) {
    let mut lcg = maxmargin_core::testing::Lcg::new(seed.wrapping_mul(0x2545_F491).wrapping_add(3));
    let mut next = move || lcg.unit31();
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut y = Vec::new();
    for _ in 0..n {
        let r: Vec<f64> = (0..d)
            .map(|_| {
                if next() < 0.3 {
                    0.0
                } else {
                    (next() * 2.0 - 1.0) * scale
                }
            })
            .collect();
        // A nonlinear boundary: the sign of x₀² + x₁·x₀ − 0.2, with noise.
        let s = r[0] * r[0] / (scale * scale)
            + r[0] * r.get(1).copied().unwrap_or(0.0) / (scale * scale)
            - 0.2
            + 0.2 * (next() - 0.5);
        y.push(if s > 0.0 { 1.0 } else { -1.0 });
        rows.push(r);
    }
    rows.push(vec![0.0; d]);
    y.push(1.0);
    let dup = rows[0].clone();
    rows.push(dup);
    y.push(-y[0]);
    let refs: Vec<&[f64]> = rows.iter().map(Vec::as_slice).collect();
    (SparseRows::from_dense_rows(&refs).unwrap(), y)
}

fn kernels(gamma: f64) -> [Kernel; 4] {
    [
        Kernel::Rbf { gamma },
        Kernel::Linear,
        Kernel::Poly {
            gamma,
            coef0: 1.0,
            degree: 3,
        },
        Kernel::Sigmoid {
            gamma: gamma * 0.1,
            coef0: 0.0,
        },
    ]
}

/// SMO at the tight ε of these tests with a cache of a few rows (so rows are computed again and again).
fn tight_smo() -> maxmargin_optim::Smo {
    SmoParams {
        epsilon: 1e-9,
        cache_mb: 1e-3,
    }
    .check()
    .unwrap()
}

/// Per-example weights with the degenerate ones mixed in: every fifth row weighs 0, the others 0.5 to 2.5.
fn weights(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            if i % 5 == 2 {
                0.0
            } else {
                0.5 + (i % 3) as f64
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn smo_reaches_the_qp_optimum_with_an_honest_certificate(
        seed in 0u64..1000,
        n in 4usize..30,
        d in 1usize..4,
        scale in prop::sample::select(vec![0.1, 1.0, 10.0]),
        lambda in prop::sample::select(vec![1e-3, 0.05, 1.0]),
        which in 0usize..4,
        weighted in any::<bool>(),
    ) {
        let (x, y) = problem(seed, n, d, scale);
        let kernel = kernels(1.0 / (scale * scale * d as f64))[which];
        let c = if weighted { weights(y.len()) } else { vec![1.0; y.len()] };
        let problem = KernelProblem::new(&x, &y, Lambda::new(lambda).unwrap(), kernel)
            .unwrap()
            .with_example_weights(&c)
            .unwrap();
        let mut smo = tight_smo();
        let budget = Budget::epochs(200_000.0).evaluating_every(1e9);
        let fit = Trainer::new(budget).unwrap().run(&mut smo, &problem, &mut ()).unwrap();
        let cap = 1.0 / (lambda * y.len() as f64);
        let upper: Vec<f64> = c.iter().map(|w| w * cap).collect();
        let record = fit.trace.last().unwrap();
        let dual = record.dual.unwrap();
        if kernel.name() != "sigmoid" {
            // A positive semi-definite kernel: the dual is concave and every bound is honest.
            prop_assert_eq!(fit.stop, StopReason::Converged);
            prop_assert!(fit.objective >= dual - 1e-12);
            let Some(best) = try_reference(&x, &y, &upper, kernel, lambda) else {
                // The reference could not be computed: only SMO's own claims are checked.
                return Ok(());
            };
            let scale_of = best.abs().max(1e-9);
            // Clarabel's own absolute tolerance (1e-10 on the C-form), in the λ-form: an optimum of 0 came
            // back as 8·10⁻¹⁴ (λ = 0.05).
            let noise = 1e-10 * lambda;
            prop_assert!(dual <= best + 1e-7 * scale_of + noise, "dual {} above the optimum {}", dual, best);
            prop_assert!(
                (dual - best).abs() <= 1e-6 * scale_of + noise,
                "dual {} against clarabel's {}",
                dual,
                best
            );
            prop_assert!(fit.objective >= dual - 1e-12);
            prop_assert!(record.gap.unwrap() <= 1e-5 * scale_of.max(fit.objective.abs()));
        }
    }
}

/// A property-test case CI drew: a linear kernel on three features, a large `C`, a row repeated with the
/// opposite label. Shrinking set aside examples early on; the five left crawled along a flat face of the dual
/// (violation 5·10⁻⁴ among them, 2.9 over all examples) for 3.6 million iterations without converging,
/// because LIBSVM's rule lets shrunk examples back only once the active ones are within 10ε. Each
/// shrinking now judges every example, and the run converges well within this budget (180,000 iterations;
/// 30,648 when measured, those of a run without shrinking).
#[test]
fn an_example_shrunk_too_early_comes_back() {
    let (x, y) = problem(358, 16, 3, 10.0);
    let lambda = 1e-3;
    let problem = KernelProblem::new(&x, &y, Lambda::new(lambda).unwrap(), Kernel::Linear).unwrap();
    let mut smo = tight_smo();
    let budget = Budget::epochs(10_000.0).evaluating_every(1e9);
    let fit = Trainer::new(budget)
        .unwrap()
        .run(&mut smo, &problem, &mut ())
        .unwrap();
    assert_eq!(fit.stop, StopReason::Converged, "{:?}", fit.progress);
    let upper = vec![1.0 / (lambda * y.len() as f64); y.len()];
    let best = reference(&x, &y, &upper, Kernel::Linear, lambda);
    let dual = fit.trace.last().unwrap().dual.unwrap();
    assert!((dual - best).abs() <= 1e-9 * best.abs(), "{dual} vs {best}");
}

/// A property-test case found by stress runs: a linear kernel on three features, weighted examples, a
/// large `C`. Pair updates crawled along a flat face of the dual for more than 4.4 million iterations
/// (LIBSVM crawls alike on such cases; this budget is 440,000); the face step (conjugate gradients over the
/// free examples, tried at each shrinking of a long run) crosses it in about 1,200, and a run stopped
/// among the face steps resumes to the same bits.
#[test]
fn a_flat_face_is_crossed_by_a_face_step() {
    let (x, y) = problem(113, 20, 3, 10.0);
    let lambda = 1e-3;
    let c = weights(y.len());
    let problem = KernelProblem::new(&x, &y, Lambda::new(lambda).unwrap(), Kernel::Linear)
        .unwrap()
        .with_example_weights(&c)
        .unwrap();
    let mut smo = tight_smo();
    let budget = Budget::epochs(20_000.0).evaluating_every(1e9);
    let fit = Trainer::new(budget)
        .unwrap()
        .run(&mut smo, &problem, &mut ())
        .unwrap();
    assert_eq!(fit.stop, StopReason::Converged, "{:?}", fit.progress);
    let cap = 1.0 / (lambda * y.len() as f64);
    let upper: Vec<f64> = c.iter().map(|w| w * cap).collect();
    let best = reference(&x, &y, &upper, Kernel::Linear, lambda);
    let dual = fit.trace.last().unwrap().dual.unwrap();
    assert!((dual - best).abs() <= 1e-7 * best.abs(), "{dual} vs {best}");
    // Stopped among the face steps (they start at 50 passes) and resumed: the bits of the run above.
    assert!(fit.progress.epoch > 53.0, "{:?}", fit.progress);
    let state = smo.init(&problem).unwrap();
    let (part, state) = Trainer::new(Budget::epochs(52.0).evaluating_every(1e9))
        .unwrap()
        .run_from(&mut smo, &problem, state, &mut ())
        .unwrap();
    assert_eq!(part.stop, StopReason::MaxEpochs);
    // Resumed from the serialized state by a new solver (an empty cache).
    let state = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
    let mut smo = tight_smo();
    let (rest, _) = Trainer::new(budget)
        .unwrap()
        .run_from(&mut smo, &problem, state, &mut ())
        .unwrap();
    assert_eq!(rest.output, fit.output);
    assert_eq!(rest.progress, fit.progress);
}

/// Issue 24: shrinking sets examples that stay at a bound aside from the working-set scans, and the run
/// still reaches the QP's optimum with an exact certificate.
#[test]
fn shrinking_scans_fewer_examples_and_reaches_the_qp_optimum() {
    let (x, y) = problem(11, 400, 3, 1.0);
    let kernel = Kernel::Rbf { gamma: 0.5 };
    let lambda = 0.02;
    let problem = KernelProblem::new(&x, &y, Lambda::new(lambda).unwrap(), kernel).unwrap();
    let mut smo = SmoParams {
        epsilon: 1e-8,
        cache_mb: 10.0,
    }
    .check()
    .unwrap();
    let fit = Trainer::new(Budget::epochs(10_000.0))
        .unwrap()
        .run(&mut smo, &problem, &mut ())
        .unwrap();
    assert_eq!(fit.stop, StopReason::Converged);
    let upper = vec![1.0 / (lambda * y.len() as f64); y.len()];
    let best = reference(&x, &y, &upper, kernel, lambda);
    let dual = fit.trace.last().unwrap().dual.unwrap();
    assert!((dual - best).abs() <= 1e-6 * best.abs(), "{dual} vs {best}");
    let full = fit.progress.iteration * y.len() as u64;
    assert!(
        (smo.examples_scanned() as f64) < 0.7 * full as f64,
        "{} examples scanned of {full}",
        smo.examples_scanned()
    );
}

/// On more examples than a step's iterations, a budget of passes stops within a pass (a step is
/// `STEP_ITERATIONS`, not `n`), and a run stopped there and resumed, shrinking and all, ends with the bits of
/// one never stopped.
#[test]
fn smo_stops_within_a_pass_and_resumes_the_same_bits() {
    let step = maxmargin_optim::smo::STEP_ITERATIONS;
    let n = 2 * step + 500;
    let (x, y) = problem(13, n, 3, 1.0);
    let kernel = Kernel::Rbf { gamma: 20.0 };
    let problem = KernelProblem::new(&x, &y, Lambda::new(1e-6).unwrap(), kernel).unwrap();
    let params = SmoParams {
        epsilon: 1e-6,
        cache_mb: 50.0,
    };
    let mut smo = params.check().unwrap();
    let whole = Trainer::new(Budget::epochs(10_000.0))
        .unwrap()
        .run(&mut smo, &problem, &mut ())
        .unwrap();
    assert_eq!(whole.stop, StopReason::Converged);
    assert!(
        whole.progress.iteration > 2 * step as u64,
        "{} iterations",
        whole.progress.iteration
    );
    let mut smo = params.check().unwrap();
    let state = smo.init(&problem).unwrap();
    let (part, state) = Trainer::new(Budget::epochs(0.5))
        .unwrap()
        .run_from(&mut smo, &problem, state, &mut ())
        .unwrap();
    assert_eq!(part.stop, StopReason::MaxEpochs);
    assert!(part.progress.epoch < 1.0, "{} passes", part.progress.epoch);
    let mut smo = params.check().unwrap();
    let (rest, _) = Trainer::new(Budget::epochs(10_000.0))
        .unwrap()
        .run_from(&mut smo, &problem, state, &mut ())
        .unwrap();
    assert_eq!(rest.output, whole.output);
    assert_eq!(rest.progress, whole.progress);
}

#[test]
fn the_cache_bound_changes_the_work_not_the_result() {
    let (x, y) = problem(5, 120, 3, 1.0);
    let kernel = Kernel::Rbf { gamma: 0.5 };
    let problem = KernelProblem::new(&x, &y, Lambda::new(0.01).unwrap(), kernel).unwrap();
    let run = |mb: f64| {
        let mut smo = SmoParams {
            epsilon: 1e-6,
            cache_mb: mb,
        }
        .check()
        .unwrap();
        let fit = Trainer::new(Budget::epochs(10_000.0))
            .unwrap()
            .run(&mut smo, &problem, &mut ())
            .unwrap();
        (fit.output, smo.rows_computed())
    };
    let (small, small_rows) = run(1e-4);
    let (large, large_rows) = run(10.0);
    assert_eq!(small, large);
    assert!(
        small_rows > large_rows,
        "{small_rows} rows against {large_rows}"
    );
    assert!(large_rows <= y.len() as u64);
}

#[test]
fn kernel_rows_do_not_depend_on_the_thread_count() {
    let (x, y) = problem(9, 300, 3, 1.0);
    let kernel = Kernel::Rbf { gamma: 1.0 };
    let problem = KernelProblem::new(&x, &y, Lambda::new(0.01).unwrap(), kernel).unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut smo = SmoParams::default().check().unwrap();
            Trainer::new(Budget::epochs(1000.0))
                .unwrap()
                .run(&mut smo, &problem, &mut ())
                .unwrap()
                .output
        })
    };
    assert_eq!(run(1), run(3));
}

#[test]
fn bad_kernel_parameters_and_states_are_refused_by_name() {
    let (x, y) = problem(1, 10, 2, 1.0);
    let lambda = Lambda::new(0.1).unwrap();
    let e = KernelProblem::new(&x, &y, lambda, Kernel::Rbf { gamma: -1.0 }).unwrap_err();
    assert!(e.to_string().contains("gamma"), "{e}");
    let poly = Kernel::Poly {
        gamma: 1.0,
        coef0: f64::NAN,
        degree: 2,
    };
    let e = KernelProblem::new(&x, &y, lambda, poly).unwrap_err();
    assert!(e.to_string().contains("coef0"), "{e}");
    let problem = KernelProblem::new(&x, &y, lambda, Kernel::Linear).unwrap();
    let mut smo = SmoParams::default().check().unwrap();
    let st = smo.init(&problem).unwrap();
    smo.check_state(&problem, &st).unwrap();
    let json = serde_json::to_string(&st)
        .unwrap()
        .replacen("\"grad\":[-1.0", "\"grad\":[1e999", 1);
    if let Ok(bad) = serde_json::from_str::<maxmargin_optim::SmoState>(&json) {
        assert!(smo.check_state(&problem, &bad).is_err());
    }
    assert!(
        SmoParams {
            epsilon: 1e-3,
            cache_mb: 0.0
        }
        .check()
        .is_err()
    );
}
