//! Output spaces, joint feature maps and loss-augmented inference (`argmax_y′ ⟨w, ψ(x, y′)⟩ + Δ(y, y′)`).
//!
//! This crate is being built (see the structured-outputs issue); today it re-exports the core's reference
//! structured hinge, which every space's oracle will be tested against. It knows nothing of solvers or files.

pub use maxmargin_core::structured::{StructuredHinge, decode, structured_hinge};
