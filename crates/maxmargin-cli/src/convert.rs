//! `maxmargin convert IN -o OUT`: a maxmargin model to LIBLINEAR's text format, or a LIBLINEAR model to a
//! maxmargin model file, whichever IN is.

use anyhow::{Result, bail};
use maxmargin::convert::{Imported, binary_to_liblinear, from_liblinear, multiclass_to_liblinear};
use maxmargin::io::liblinear::LiblinearModel;
use std::path::Path;

pub(crate) fn run(input: &Path, output: &Path) -> Result<()> {
    match maxmargin::io::model_file::read_header(input) {
        Ok(header) => {
            let kind = header.kind;
            let lib = if kind == maxmargin::linear::MODEL_KIND
                || kind == maxmargin::linear::DECISION_KIND
            {
                let decision = maxmargin::linear::DecisionModel::load(input)?;
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
        Err(header_error) => {
            let lib = LiblinearModel::read(input).map_err(|e| {
                anyhow::anyhow!("{e} (and not a maxmargin model either: {header_error})")
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
