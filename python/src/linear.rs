//! Linear classifiers: binary (dual coordinate descent, Pegasos, the subgradient method) and multiclass
//! (one-vs-rest, Crammer–Singer, softmax), returned as `coef` and `intercept`.

use super::*;
use crate::kernel::Trained;

/// Trains a linear classifier on CSR rows with class indices `y` (`0..k`, as floats; `k = 2` trains one
/// binary model whose positive class is 1) and returns a dict: `coef` (`rows × n_features`, one row for two
/// classes), `intercept`, `objective`, `duality_gap` (`None` when the solver certifies none), `n_iter`,
/// `converged`, `stop`, `warnings`.
#[pyfunction]
#[pyo3(signature = (
    x, y, sample_weight=None, *, c=1.0, loss="hinge",
    multi_class="auto", solver="auto", tol=None, gap=None, max_iter=None, class_weight=Vec::new(),
    fit_intercept=true, random_state=0, scale="none", classes=None, verbose=0
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fit_linear<'py>(
    py: Python<'py>,
    x: Csr<'py>,
    y: PyReadonlyArray1<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    c: f64,
    loss: &str,
    multi_class: &str,
    solver: &str,
    tol: Option<f64>,
    gap: Option<f64>,
    max_iter: Option<f64>,
    class_weight: Vec<(f64, f64)>,
    fit_intercept: bool,
    random_state: u64,
    scale: &str,
    classes: Option<Vec<f64>>,
    verbose: u8,
) -> PyResult<(Option<Model>, Bound<'py, PyDict>)> {
    let x = x.rows()?;
    let n_features = x.n_features();
    let (x, y, weights, k) = examples(x, y.as_slice()?, sample_weight.as_ref())?;
    let (y, class_weight, positive) = labelled(y, k, classes.as_deref(), class_weight)?;
    let (x, columns) = compacted(x, n_features)?;
    let width = columns.as_ref().map_or(n_features, Vec::len);
    let dataset = dataset(x, y);
    let scale = scaling(scale)?;
    let loss = match loss {
        "hinge" => BinaryLoss::Hinge,
        "squared_hinge" => BinaryLoss::SquaredHinge,
        "logistic" => BinaryLoss::Logistic,
        other => {
            return Err(value_error(format!(
                "loss={other:?}: give hinge, squared_hinge or logistic"
            )));
        }
    };
    let settings = Settings {
        c,
        loss,
        multi_class,
        solver,
        tol,
        gap,
        max_iter,
        class_weight,
        fit_intercept,
        seed: random_state,
        scale,
        positive,
        sample_weight: weights,
    };
    let fit = |watch: &mut Watch<'_>| -> Result<_, maxmargin::Error> {
        let (trained, warnings) = if k <= 2 {
            fit_binary(&dataset, settings, watch)?
        } else {
            fit_multiclass(&dataset, settings, watch)?
        };
        let fitted = Fitted::of_trained(&trained, width, warnings)?;
        Ok((trained, fitted))
    };
    let (fitted, interrupted) = interruptible(py, verbose, fit);
    if let Some(e) = interrupted {
        return Err(e);
    }
    let (trained, mut fitted) = fitted.map_err(value_error)?;
    if let Some(cols) = &columns {
        fitted.coef = scattered(&fitted.coef, width, cols, n_features)?;
    }
    // A model over a very wide matrix's used columns only is not the data's model: no file of it.
    let model = columns.is_none().then(|| Model::of(trained));
    Ok((model, fitted.report(py)?))
}

/// The keyword arguments of a fit.
struct Settings<'a> {
    c: f64,
    loss: BinaryLoss,
    multi_class: &'a str,
    solver: &'a str,
    tol: Option<f64>,
    gap: Option<f64>,
    max_iter: Option<f64>,
    class_weight: Vec<(f64, f64)>,
    fit_intercept: bool,
    seed: u64,
    scale: Scaling,
    /// The positive class's label (two classes).
    positive: f64,
    /// Per-row weights.
    sample_weight: Option<Vec<f64>>,
}

/// Two classes: the binary estimator (dual coordinate descent, Pegasos or the subgradient method), class 1
/// positive; returns the model and the run's warnings.
fn fit_binary(
    data: &LabeledData,
    s: Settings<'_>,
    watch: &mut Watch<'_>,
) -> Result<(Trained, Vec<String>), maxmargin::Error> {
    // "auto": Newton's method in the primal where it suits the shape (a smooth loss, more rows than
    // features; scikit-learn's dual="auto"), unless dcd's tol was given.
    let primal = LinearSvmParams::new()
        .loss(s.loss)
        .primal_suits(data.n_samples(), data.x.n_features());
    let newton = || {
        LinearSolver::Newton(Newton {
            gap_target: s.gap.unwrap_or(Newton::default().gap_target),
            ..Newton::default()
        })
    };
    let solver = match s.solver {
        "auto" if primal && s.tol.is_none() => newton(),
        "newton" => newton(),
        "dcd" | "auto" => LinearSolver::Dcd(match s.tol {
            Some(tol) => DcdParams::new().epsilon(tol),
            None => DcdParams::new(),
        }),
        "pegasos" => LinearSolver::from(SolverKind::Pegasos),
        "subgradient" => LinearSolver::from(SolverKind::Subgradient),
        other => {
            let why = "give auto, dcd, newton, pegasos or subgradient";
            return Err(refused("solver", other, why));
        }
    };
    if s.tol.is_some() && !matches!(solver, LinearSolver::Dcd(_)) {
        let why =
            "is dcd's stopping tolerance; newton, pegasos and subgradient stop on max_iter or gap";
        return Err(refused("tol", "set", why));
    }
    let mut p = LinearSvmParams::new()
        .solver(solver)
        .regularization(Regularization::CSum(s.c))
        .loss(s.loss)
        .bias(if s.fit_intercept {
            Bias::Feature
        } else {
            Bias::None
        })
        .seed(s.seed)
        .scale(s.scale);
    if let Some(g) = s.gap {
        p = p.gap(g);
    }
    if let Some(m) = s.max_iter {
        p = p.epochs(m);
    }
    p.class_weights = s.class_weight;
    // The positive class is scikit-learn's `classes_[1]`.
    p.positive = Some(s.positive);
    let mut svm = p.check()?;
    if let Some(w) = s.sample_weight {
        svm = svm.sample_weights(w)?;
    }
    let report = svm.fit_observed(data, watch)?;
    Ok((Trained::binary(report.model), report.warnings))
}

/// More classes: Crammer–Singer's dual or one-vs-rest for the hinge, the softmax (multinomial logistic) dual
/// for the logistic loss, SSG for the primal solvers; one row of `coef` per class. Returns the model and the
/// run's warnings.
fn fit_multiclass(
    data: &LabeledData,
    s: Settings<'_>,
    watch: &mut Watch<'_>,
) -> Result<(Trained, Vec<String>), maxmargin::Error> {
    // More classes: "auto" is dcd's family; the multinomial model is trained by Newton's method anyway.
    let solver = match (s.solver, s.loss, s.multi_class) {
        ("auto", _, _) | ("newton", BinaryLoss::Logistic, "auto" | "multinomial") => "dcd",
        ("newton", _, _) => {
            let why = "trains two classes (squared_hinge or logistic), or more by the multinomial \
                       model (loss=logistic); give auto or dcd";
            return Err(refused("solver", "newton", why));
        }
        (other, _, _) => other,
    };
    let kind = match (s.loss, s.multi_class, solver) {
        (BinaryLoss::Logistic, "auto" | "multinomial", "dcd") => StructSolverKind::Softmax,
        (_, "ovr", "dcd") | (BinaryLoss::Hinge | BinaryLoss::SquaredHinge, "auto", "dcd") => {
            StructSolverKind::Ovr
        }
        (BinaryLoss::Hinge, "crammer_singer", "dcd") => StructSolverKind::Dcd,
        (BinaryLoss::Hinge, "crammer_singer" | "auto", "subgradient" | "pegasos") => {
            StructSolverKind::Ssg
        }
        (_, "crammer_singer", _) => {
            let why = "is the hinge's multiclass SVM: give ovr (or auto) for this loss";
            return Err(refused("multi_class", "crammer_singer", why));
        }
        (BinaryLoss::Hinge | BinaryLoss::SquaredHinge, "multinomial", _) => {
            let why = "is the logistic loss's model: give auto or ovr (or crammer_singer for the \
                       hinge), or loss=logistic";
            return Err(refused("multi_class", "multinomial", why));
        }
        (BinaryLoss::Logistic | BinaryLoss::SquaredHinge, _, solver) => {
            return Err(refused("solver", solver, "trains this loss by dcd only"));
        }
        (_, "ovr", "subgradient" | "pegasos") => {
            let why = "trains the Crammer-Singer objective with more than two classes: give \
                       multi_class=auto or crammer_singer, or solver=dcd for one-vs-rest";
            return Err(refused("solver", solver, why));
        }
        (_, "auto" | "multinomial", solver) => {
            return Err(refused(
                "solver",
                solver,
                "give dcd, pegasos or subgradient",
            ));
        }
        (_, m, _) => {
            let why = "give auto, ovr, crammer_singer (hinge) or multinomial (logistic)";
            return Err(refused("multi_class", m, why));
        }
    };
    let mut p = StructuredSvmParams::new(Task::Multiclass)
        .solver(kind)
        .c(s.c)
        .bias(s.fit_intercept)
        .scale(s.scale)
        .class_weights(s.class_weight);
    p.epsilon = s.tol.unwrap_or(p.epsilon);
    p.max_passes = s.max_iter;
    p.gap = s.gap;
    p.seed = s.seed;
    if kind == StructSolverKind::Ovr {
        p.loss = s.loss;
    }
    let mut svm = p.check()?;
    if let Some(w) = s.sample_weight {
        svm = svm.sample_weights(w)?;
    }
    let report = svm.fit_multiclass(data, watch)?;
    Ok((Trained::Multiclass(Box::new(report.model)), report.warnings))
}
