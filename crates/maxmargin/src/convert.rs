//! Models between maxmargin and LIBLINEAR: a binary model is one weight column (LIBLINEAR predicts its
//! first label when the score is positive), a multiclass model one column per class. A model with feature
//! scaling is written with the scaling folded into its weights (LIBLINEAR reads raw features), and the
//! intercept as LIBLINEAR's bias feature (`bias 1`). Models read from LIBLINEAR carry its weights and labels
//! and no certificate: their training summary says `imported`.

use crate::Error;
use crate::linear::{LinearModel, LinearSvmParams, TrainingSummary};
use crate::structured_svm::{StructTrainingSummary, StructuredModel, StructuredSvmParams, Task};
use maxmargin_io::IoError;
use maxmargin_io::liblinear::LiblinearModel;
use maxmargin_optim::{Bias, BinaryLoss, StopReason};
use std::path::Path;

/// A model read from LIBLINEAR: binary or multiclass.
#[derive(Debug, Clone, PartialEq)]
pub enum Imported {
    /// Two classes, one weight column.
    Binary(LinearModel),
    /// One weight column per class (one-vs-rest or Crammer–Singer).
    Multiclass(StructuredModel),
}

/// A binary model as LIBLINEAR's (`L2R_L1LOSS_SVC_DUAL`, `L2R_L2LOSS_SVC_DUAL` for the squared hinge,
/// `L2R_LR_DUAL` for logistic regression).
///
/// # Examples
/// ```
/// # fn main() -> Result<(), maxmargin::Error> {
/// let data = maxmargin::datasets::heart_scale()?;
/// let model = maxmargin::LinearSvmParams::new().check()?.fit(&data)?;
/// let lib = maxmargin::convert::binary_to_liblinear(&model);
/// let back = maxmargin::convert::from_liblinear(&lib, "m".as_ref())?;
/// let maxmargin::convert::Imported::Binary(back) = back else { unreachable!() };
/// assert_eq!(back.predict_rows(&data.x), model.predict_rows(&data.x));
/// # Ok(()) }
/// ```
///
/// A kernel model has no weights to write: [`binary_to_liblinear`] is for linear models, and the caller
/// refuses a kernel one (see [`LinearModel::is_kernel`]).
pub fn binary_to_liblinear(model: &LinearModel) -> LiblinearModel {
    let (w, b) = match &model.scaler {
        Some(s) => s.fold_linear(&model.w, model.b),
        None => (model.w.clone(), model.b),
    };
    let has_bias = model.bias != Bias::None || b != 0.0;
    let mut weights = w;
    if has_bias {
        weights.push(b);
    }
    LiblinearModel {
        solver: solver_of(model.params.loss).into(),
        // LIBLINEAR predicts its first label when the score is positive.
        labels: vec![model.labels[1], model.labels[0]],
        bias: if has_bias { 1.0 } else { -1.0 },
        n_features: model.n_features,
        columns: 1,
        w: weights,
    }
}

/// LIBLINEAR's dual solver type for a binary loss (also one-vs-rest's columns).
fn solver_of(loss: BinaryLoss) -> &'static str {
    match loss {
        BinaryLoss::SquaredHinge => "L2R_L2LOSS_SVC_DUAL",
        BinaryLoss::Hinge => "L2R_L1LOSS_SVC_DUAL",
        BinaryLoss::Logistic => "L2R_LR_DUAL",
        // A loss LIBLINEAR has no solver type for: a name its reader refuses, never another loss's.
        _ => "UNSUPPORTED_LOSS",
    }
}

/// The loss of a LIBLINEAR solver type: logistic models give probabilities (the loss says so to predict
/// and eval), and a squared-hinge model is written back as one.
fn loss_of(solver: &str) -> BinaryLoss {
    if solver.contains("R_LR") {
        BinaryLoss::Logistic
    } else if solver.contains("L2LOSS") {
        BinaryLoss::SquaredHinge
    } else {
        BinaryLoss::Hinge
    }
}

/// A multiclass model as LIBLINEAR's: Crammer–Singer (`MCSVM_CS`) for the Crammer–Singer dual and the
/// structural solvers, one-vs-rest (one column per class, the solver type of its loss: `L2R_L1LOSS_SVC_DUAL`
/// for the hinge) for `ovr` with more than two classes.
///
/// # Errors
/// A model of another task.
pub fn multiclass_to_liblinear(model: &StructuredModel) -> Result<LiblinearModel, Error> {
    if model.task != Task::Multiclass {
        return Err(maxmargin_optim::OptimError::InvalidParam {
            name: "task",
            value: model.task.kind().into(),
            reason: "LIBLINEAR holds binary and multiclass models",
        }
        .into());
    }
    if model.is_nonlinear() {
        return Err(crate::error::refuse(
            "model",
            "a multiclass kernel model",
            "cannot be written in LIBLINEAR's format, which holds linear weights only (convert --to json or \
             bin keeps it)",
        ));
    }
    let (d, k) = (model.n_features, model.n_labels);
    let width = d + usize::from(model.params.bias);
    let mut columns: Vec<(Vec<f64>, f64)> = (0..k)
        .map(|c| {
            let block = &model.w[c * width..(c + 1) * width];
            let b = if model.params.bias { block[d] } else { 0.0 };
            match &model.scaler {
                Some(s) => s.fold_linear(&block[..d], b),
                None => (block[..d].to_vec(), b),
            }
        })
        .collect();
    let has_bias = model.params.bias || columns.iter().any(|c| c.1 != 0.0);
    let rows = d + usize::from(has_bias);
    let mut w = Vec::with_capacity(rows * k);
    for j in 0..rows {
        for col in &mut columns {
            w.push(if j < d { col.0[j] } else { col.1 });
        }
    }
    Ok(LiblinearModel {
        // Two columns are read as two only under MCSVM_CS (LIBLINEAR keeps one column for two classes
        // otherwise); its prediction is the largest score, as ours.
        solver: if model.params.solver == crate::StructSolverKind::Ovr && k > 2 {
            solver_of(model.params.loss)
        } else {
            "MCSVM_CS"
        }
        .into(),
        labels: model.classes.clone(),
        bias: if has_bias { 1.0 } else { -1.0 },
        n_features: d,
        columns: k,
        w,
    })
}

/// A LIBLINEAR model as ours (`source` names it in errors).
///
/// # Errors
/// Labels that repeat, or weights that do not fit the labels and features.
pub fn from_liblinear(lib: &LiblinearModel, source: &Path) -> Result<Imported, Error> {
    let columns_ok = if lib.columns == 1 {
        lib.labels.len() == 2
    } else {
        lib.columns == lib.labels.len() && lib.columns >= 2
    };
    if !columns_ok || lib.rows().checked_mul(lib.columns) != Some(lib.w.len()) {
        return Err(IoError::BadModel {
            path: source.to_path_buf(),
            message: format!(
                "{} weights in {} columns for {} labels and {} rows",
                lib.w.len(),
                lib.columns,
                lib.labels.len(),
                lib.rows()
            ),
        }
        .into());
    }
    let mut sorted = lib.labels.clone();
    sorted.sort_by(f64::total_cmp);
    if sorted.windows(2).any(|p| p[0] == p[1]) {
        return Err(IoError::BadModel {
            path: source.to_path_buf(),
            message: "a label repeats".into(),
        }
        .into());
    }
    let d = lib.n_features;
    let bias_of = |m: usize| {
        if lib.bias >= 0.0 {
            lib.weight(d, m) * lib.bias
        } else {
            0.0
        }
    };
    if let Some(m) = (0..lib.columns).find(|&m| !bias_of(m).is_finite()) {
        return Err(IoError::BadModel {
            path: source.to_path_buf(),
            message: format!(
                "bias: {:e} times the bias weight {:e} is not finite",
                lib.bias,
                lib.weight(d, m)
            ),
        }
        .into());
    }
    if lib.columns == 1 {
        // LIBLINEAR's decision `f > 0` means its first label; ours means the larger label. When the first
        // label is the smaller one (`label -1 1`, common: the order of first appearance), the weights change
        // sign so that the same rows get the same labels.
        let sign = if lib.labels[0] < lib.labels[1] {
            -1.0
        } else {
            1.0
        };
        let w: Vec<f64> = (0..d).map(|j| sign * lib.weight(j, 0)).collect();
        let bias = if lib.bias >= 0.0 {
            Bias::Feature
        } else {
            Bias::None
        };
        let params = LinearSvmParams::new().bias(bias).loss(loss_of(&lib.solver));
        return Ok(Imported::Binary(LinearModel {
            w,
            b: sign * bias_of(0),
            labels: if sign < 0.0 {
                [lib.labels[0], lib.labels[1]]
            } else {
                [lib.labels[1], lib.labels[0]]
            },
            n_features: d,
            bias,
            lambda: 1.0,
            seed: 0,
            params,
            training: TrainingSummary {
                n_samples: 0,
                objective: 0.0,
                iterations: 0,
                epochs: 0.0,
                stop: StopReason::Imported,
                gap: None,
                converged: false,
            },
            scaler: None,
            kernel: None,
            features: None,
            inputs: None,
        }));
    }
    let k = lib.columns;
    let has_bias = lib.bias >= 0.0;
    let width = d + usize::from(has_bias);
    let mut w = vec![0.0; width * k];
    for c in 0..k {
        for j in 0..d {
            w[c * width + j] = lib.weight(j, c);
        }
        if has_bias {
            w[c * width + d] = bias_of(c);
        }
    }
    let mut params = StructuredSvmParams::new(Task::Multiclass).bias(has_bias);
    if lib.solver != "MCSVM_CS" {
        // One column per class from LIBLINEAR's binary solvers: one-vs-rest, with their loss.
        params.solver = crate::StructSolverKind::Ovr;
        params.loss = loss_of(&lib.solver);
    }
    Ok(Imported::Multiclass(StructuredModel {
        task: Task::Multiclass,
        w,
        n_features: d,
        n_labels: k,
        classes: lib.labels.clone(),
        lambda: 1.0,
        seed: 0,
        params,
        training: StructTrainingSummary {
            n_samples: 0,
            objective: 0.0,
            gap: None,
            iterations: 0,
            passes: 0.0,
            stop: StopReason::Imported,
            converged: false,
        },
        scaler: None,
        kernel: None,
        features: None,
        inputs: None,
        shape: Default::default(),
    }))
}
