//! `cv --task multiclass|multilabel|chain`: k-fold cross-validation of the structured tasks by their own
//! measures (multiclass accuracy, multilabel micro-averaged F1, chain token accuracy), at one C or along
//! `--c-path`, with `--refit`, `--groups` and `--json` as binary `cv` has them.

use super::*;
use maxmargin::io::{multilabel, svm_hmm};
use maxmargin::structured_svm::{StructCrossValidation, StructData, Task};

/// The data of a task, owned.
enum Owned {
    Multiclass(maxmargin::io::libsvm::LabeledData),
    Multilabel(maxmargin::io::multilabel::MultilabelData),
    Chain(maxmargin::io::svm_hmm::SequenceData),
}

impl Owned {
    fn view(&self) -> StructData<'_> {
        match self {
            Self::Multiclass(d) => StructData::Multiclass(d),
            Self::Multilabel(d) => StructData::Multilabel(d),
            Self::Chain(d) => StructData::Chain(d),
        }
    }

    fn source(&self) -> &Path {
        match self {
            Self::Multiclass(d) => &d.source,
            Self::Multilabel(d) => &d.source,
            Self::Chain(d) => &d.source,
        }
    }
}

/// A first line whose tag is not a number says that `cv --task chain` reads svm_hmm lines, not CoNLL
/// text (a word and its tag), which it does not cross-validate.
fn not_conll(e: maxmargin::io::IoError) -> anyhow::Error {
    match &e {
        maxmargin::io::IoError::Parse {
            line: 1,
            field: "label",
            ..
        } => anyhow::anyhow!(
            "{e} (cv --task chain reads svm_hmm lines, `TAG qid:Q INDEX:VALUE ...`; CoNLL text is not \
             cross-validated: train a tagger on one file and eval it on another)"
        ),
        _ => e.into(),
    }
}

/// `cv` of a structured task; returns whether every fold's model (and the refit) converged.
pub(crate) fn cv(cmd: &CvCmd, task: Task) -> Result<bool> {
    let args = &cmd.opts;
    let latent = match (
        args.structural.latent_subclasses,
        args.structural.latent_states,
    ) {
        (Some(_), _) if task != Task::Multiclass => {
            bail!("--latent-subclasses applies to --task multiclass (chains take --latent-states)")
        }
        (_, Some(_)) if task != Task::Chain => {
            bail!("--latent-states applies to --task chain (multiclass takes --latent-subclasses)")
        }
        (s, k) => s.or(k),
    };
    if args.structural.order.is_some() && task != Task::Chain {
        bail!(
            "--order applies to --task chain, not --task {}",
            task.kind()
        );
    }
    if args.structural.min_count.is_some() {
        bail!("--min-count applies to train --format conll");
    }
    if cmd.metric != MetricArg::Accuracy {
        bail!(
            "--metric applies to binary cv; --task {} is measured by {}",
            task.kind(),
            match task {
                Task::Multilabel => "micro_f1",
                Task::Chain => "token_accuracy",
                _ => "accuracy",
            }
        );
    }
    let data = match task {
        Task::Multiclass => Owned::Multiclass(crate::load::read_labelled(&cmd.data)?),
        Task::Multilabel => Owned::Multilabel(multilabel::read(crate::load::not_csv(
            &cmd.data,
            "multilabel",
        )?)?),
        _ => Owned::Chain(
            svm_hmm::read(crate::load::not_csv(&cmd.data, "svm_hmm")?).map_err(not_conll)?,
        ),
    };
    let view = data.view();
    if view.n() == 0 {
        return Err(maxmargin::io::IoError::Empty {
            path: data.source().to_path_buf(),
        }
        .into());
    }
    let fold_of = match &cmd.groups {
        Some(path) => {
            let names = maxmargin::side_files::read_group_names(path, view.n(), data.source())?;
            maxmargin::linear::group_folds(&names, cmd.folds)?
        }
        None => view.folds(cmd.folds, args.seed)?,
    };
    let (svm, _) = structured::estimator(args, task)?;
    let mut all_converged = true;
    let points: Vec<(Option<f64>, StructCrossValidation)> = if cmd.c_path.is_empty() {
        vec![(None, svm.cross_validate_latent(view, &fold_of, latent)?)]
    } else {
        let mut cs = cmd.c_path.clone();
        cs.sort_by(f64::total_cmp);
        if cs.windows(2).any(|p| p[0] >= p[1]) || cs.iter().any(|c| !(c.is_finite() && *c > 0.0)) {
            bail!("--c-path must list distinct positive C values");
        }
        cs.iter()
            .map(|&c| {
                let mut p = svm.params().clone();
                p.regularization = maxmargin::core::objective::Regularization::CSum(c);
                Ok((
                    Some(c),
                    p.check()?
                        .chain_shape(svm.shape())
                        .cross_validate_latent(view, &fold_of, latent)?,
                ))
            })
            .collect::<Result<_>>()?
    };
    let short: Vec<String> = points
        .iter()
        .filter(|(_, cv)| !cv.converged)
        .map(|(c, cv)| {
            let n = cv.folds.iter().filter(|f| !f.converged).count();
            match c {
                Some(c) => format!("{n} of {} at C={c}", cv.folds.len()),
                None => format!("{n} of {}", cv.folds.len()),
            }
        })
        .collect();
    if !short.is_empty() {
        all_converged = false;
        note!(
            "warning: folds stopped short of their certified gap ({}): their measures are of unconverged models; \
             more passes (--max-passes) or a smaller C",
            short.join(", ")
        );
    }
    let metric = view.metric();
    let best = points.iter().filter(|(_, cv)| cv.mean.is_finite()).fold(
        None::<(Option<f64>, f64)>,
        |b, (c, cv)| match b {
            Some((_, m)) if m >= cv.mean => b,
            _ => Some((*c, cv.mean)),
        },
    );
    if cmd.json {
        let value: Vec<serde_json::Value> = points
            .iter()
            .map(|(c, cv)| {
                let mut v = serde_json::to_value(cv)?;
                v["c"] = serde_json::json!(c);
                v["best"] = serde_json::json!(best.is_some_and(|b| b.0 == *c));
                Ok(v)
            })
            .collect::<Result<_>>()?;
        if cmd.c_path.is_empty() {
            out!("{}", value[0]);
        } else {
            out!("{}", serde_json::Value::Array(value));
        }
    } else if cmd.c_path.is_empty() {
        let cv = &points[0].1;
        for (f, fold) in cv.folds.iter().enumerate() {
            out!("fold {}  {metric} {:.4}", f + 1, fold.score);
        }
        out!("mean    {metric} {:.4} (sd {:.4})", cv.mean, cv.sd);
    } else {
        out!("C            {metric} (mean, sd)");
        for (c, cv) in &points {
            let c = maxmargin::io::libsvm::format_number(c.unwrap_or(f64::NAN));
            out!("{c:<12} {:.4}  {:.4}", cv.mean, cv.sd);
        }
        if let Some((Some(c), v)) = best {
            let c = maxmargin::io::libsvm::format_number(c);
            out!("best C = {c} ({metric} {v:.4})");
        }
    }
    if let (true, Some(out_path)) = (cmd.refit, &cmd.output) {
        let mut p = svm.params().clone();
        if let Some((Some(c), _)) = best {
            p.regularization = maxmargin::core::objective::Regularization::CSum(c);
        }
        let svm = p.check()?.chain_shape(svm.shape());
        let (model, warnings, rounds_converged) = match (view, latent) {
            (StructData::Multiclass(d), Some(s)) => {
                let r = svm.fit_latent_multiclass(d, s, &mut ())?;
                r.model.save(out_path)?;
                let settled = r.model.stop == maxmargin::optim::latent::CccpStop::Converged;
                (r.model.model, r.warnings, settled)
            }
            (StructData::Chain(d), Some(k)) => {
                let r = svm.fit_latent_chain(d, k, &mut ())?;
                r.model.save(out_path)?;
                let settled = r.model.stop == maxmargin::optim::latent::CccpStop::Converged;
                (r.model.model, r.warnings, settled)
            }
            (view, _) => {
                let r = match view {
                    StructData::Multiclass(d) => svm.fit_multiclass(d, &mut ())?,
                    StructData::Multilabel(d) => svm.fit_multilabel(d, &mut ())?,
                    StructData::Chain(d) => svm.fit_chain(d, &mut ())?,
                };
                r.model.save(out_path)?;
                (r.model, r.warnings, true)
            }
        };
        for w in &warnings {
            note!("warning: {w}");
        }
        let t = &model.training;
        all_converged &= t.converged && rounds_converged;
        let fit = (t.objective, t.gap, t.converged);
        crate::report::refit_saved(
            (t.n_samples, "examples"),
            best.and_then(|b| b.0),
            fit,
            out_path,
        );
    }
    Ok(all_converged)
}
