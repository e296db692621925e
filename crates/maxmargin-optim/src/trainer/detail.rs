//! What one step did, recorded in the trace when the trainer follows a run step by step
//! ([`super::Trainer::with_step_details`]).

use serde::{Deserialize, Serialize};

/// What one step did, for small problems followed step by step (the lessons' hand tables).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StepDetail {
    /// The weights of the solver's output after the step.
    pub weights: Vec<f64>,
    /// Its bias, when it has one apart from the weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bias: Option<f64>,
    /// The examples the step used, each with its margin before the step (stochastic solvers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<StepExample>,
}

/// An example a step used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepExample {
    /// Its index (0-based, in the data's order).
    pub example: usize,
    /// `y(⟨w, x⟩ + b)` before the step.
    pub margin: f64,
    /// `violated` (margin below 1: the hinge's subgradient moves `w` toward it) or `else` (only the shrink).
    pub case: String,
}

impl StepExample {
    /// An example with its margin, and the case the margin puts it in.
    pub fn new(example: usize, margin: f64) -> Self {
        Self {
            example,
            margin,
            case: if margin < 1.0 { "violated" } else { "else" }.into(),
        }
    }
}
