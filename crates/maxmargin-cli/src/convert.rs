//! `maxmargin convert IN -o OUT`: a maxmargin model to LIBLINEAR's text format, or a LIBLINEAR model to a
//! maxmargin model file, whichever IN is.

use crate::args::ConvertTo;
use anyhow::{Result, bail};
use maxmargin::convert::{Imported, binary_to_liblinear, from_liblinear, multiclass_to_liblinear};
use maxmargin::io::IoError;
use maxmargin::io::liblinear::LiblinearModel;
use std::path::Path;

pub(crate) fn run(input: &Path, output: &Path, to: Option<ConvertTo>) -> Result<()> {
    let json_out = output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    // The format follows --to, else the extension; a name that says otherwise is refused, never written to.
    let to = match (to, json_out) {
        (Some(ConvertTo::Json), false) => bail!(
            "--to json writes a maxmargin JSON model: name the output *.json ({} is not)",
            output.display()
        ),
        (Some(t @ (ConvertTo::Bin | ConvertTo::Liblinear)), true) => bail!(
            "--to {} does not write JSON: give the output another extension than .json ({})",
            if t == ConvertTo::Bin {
                "bin"
            } else {
                "liblinear"
            },
            output.display()
        ),
        (Some(t), _) => Some(t),
        (None, true) => Some(ConvertTo::Json),
        (None, false) => None,
    };
    match maxmargin::io::model_file::read_header(input) {
        Ok(header) if matches!(to, Some(ConvertTo::Json | ConvertTo::Bin)) => {
            return reencode(input, output, &header.kind);
        }
        Ok(header) => {
            let kind = header.kind;
            let lib = if kind == maxmargin::linear::MODEL_KIND
                || kind == maxmargin::linear::DECISION_KIND
            {
                let decision = maxmargin::linear::DecisionModel::load(input)?;
                if decision.model.is_nonlinear() {
                    bail!(
                        "{} is a kernel model: LIBLINEAR's format holds linear weights only (convert --to json or \
                         bin keeps it)",
                        input.display()
                    );
                }
                if decision.calibration.is_some() || decision.threshold.is_some() {
                    note!(
                        "warning: {}: LIBLINEAR keeps no calibration or threshold; only the weights are written",
                        input.display()
                    );
                }
                binary_to_liblinear(&decision.model)
            } else if kind == "multiclass" {
                multiclass_to_liblinear(&maxmargin::StructuredModel::load(input)?)?
            } else {
                bail!(
                    "{}: a {kind} model has no LIBLINEAR form (LIBLINEAR holds binary and multiclass models)",
                    input.display()
                );
            };
            lib.write(output)?;
            note!(
                "wrote {} (LIBLINEAR {}, {} classes, {} features{})",
                output.display(),
                lib.solver,
                lib.labels.len(),
                lib.n_features,
                if lib.bias >= 0.0 { ", bias 1" } else { "" }
            );
        }
        Err(_) if to == Some(ConvertTo::Liblinear) => bail!(
            "{}: not a maxmargin model, so there is nothing to convert to LIBLINEAR (a LIBLINEAR model converts \
             with --to json or bin)",
            input.display()
        ),
        Err(header_error) => {
            // A fault past a LIBLINEAR file's first header line is that file's own: the note that it is not a
            // maxmargin model is only for a file that is neither from its first line.
            let lib = LiblinearModel::read(input).map_err(|e| match e {
                IoError::Parse { line, .. } if line > 1 => anyhow::Error::from(e),
                e => anyhow::anyhow!("{e} (and not a maxmargin model either: {header_error})"),
            })?;
            match from_liblinear(&lib, input)? {
                Imported::Binary(m) => m.save(output)?,
                Imported::Multiclass(m) => m.save(output)?,
            }
            note!(
                "wrote {} from LIBLINEAR's {} model ({} classes, {} features); it records no training certificate",
                output.display(),
                lib.solver,
                lib.labels.len(),
                lib.n_features
            );
        }
    }
    Ok(())
}

/// A maxmargin model written again in the encoding `output` names (JSON for a .json name, else binary).
fn reencode(input: &Path, output: &Path, kind: &str) -> Result<()> {
    if kind == maxmargin::linear::MODEL_KIND {
        maxmargin::LinearModel::load(input)?.save(output)?;
    } else if kind == maxmargin::linear::DECISION_KIND {
        maxmargin::linear::DecisionModel::load(input)?.save(output)?;
    } else if kind == maxmargin::structured_svm::MULTICLASS_DECISION_KIND {
        maxmargin::structured_svm::CalibratedMulticlass::load(input)?.save(output)?;
    } else if ["multiclass", "multilabel", "chain"].contains(&kind) {
        maxmargin::StructuredModel::load(input)?.save(output)?;
    } else {
        bail!(
            "{}: a {kind} model is not re-encoded by convert",
            input.display()
        );
    }
    // "binary" is the model's task here, not its encoding, which the name gives.
    let json = output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let encoding = if json { "JSON" } else { "binary encoding" };
    note!("wrote {} (a {kind} model, {encoding})", output.display());
    Ok(())
}
