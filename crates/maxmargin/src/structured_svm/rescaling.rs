//! Where slack rescaling applies: the cutting planes, on spaces with an exact slack-rescaled oracle.

use super::*;

impl StructuredSvmParams {
    /// Refuses slack rescaling where it cannot apply, naming why.
    pub(super) fn check_rescaling(&self) -> Result<(), Error> {
        if self.rescaling == Rescaling::Margin {
            return Ok(());
        }
        let solver = format!("{:?}", self.solver).to_lowercase();
        if !matches!(
            self.solver,
            StructSolverKind::Oneslack | StructSolverKind::Nslack
        ) {
            return Err(crate::error::refuse(
                "slack rescaling",
                format!("the {solver} solver"),
                "is trained by the cutting planes only (--solver oneslack or nslack), whose constraints \
                 carry the loss as a factor; the other solvers train margin rescaling",
            ));
        }
        if !matches!(
            self.task,
            Task::Multiclass | Task::Multilabel | Task::Custom
        ) {
            return Err(crate::error::refuse(
                "rescaling",
                format!("slack for {}", self.task.kind()),
                "needs exact slack-rescaled inference, which multiclass and multilabel have (and custom \
                 spaces that implement OutputSpace::slack_rescaled); chains and graphs have none here",
            ));
        }
        Ok(())
    }
}
