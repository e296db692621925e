//! Where a streamed run stands between two passes, for its checkpoints: what a source says of itself
//! ([`Resumable`], [`SourcePlace`]), what the problem's evaluations carry ([`Carried`]), and both together
//! ([`StreamPlace`]), checked before a resumed run reads them.

use crate::error::{OptimError, all_finite, fits, invalid};
use crate::trainer::{Certificate, Progress};
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};

/// Where a streamed source stands between two passes: the passes made (which order the next one) and, for
/// a checkpoint, its whole place. Row sources ([`RowPasses`](super::RowPasses)) and example sources
/// ([`ExamplePasses`](crate::ExamplePasses)) both say it; the defaults suit a source whose order never
/// changes and which cannot be checkpointed.
pub trait Resumable {
    /// Passes made so far, which order the next one (0 for a source whose order does not change).
    fn passes(&self) -> u64 {
        0
    }

    /// Continues as if `passes` passes had been made: the next pass comes in that pass's order. A
    /// certificate's passes are taken back this way, so that when a run is certified does not change the
    /// orders of its training passes. The default does nothing.
    fn set_passes(&mut self, _passes: u64) {}

    /// Where the source stands between two passes, for a checkpoint. The default cannot say (refused).
    ///
    /// # Errors
    /// A read error of the column, or a source that cannot say.
    fn place(&mut self) -> Result<SourcePlace, OptimError> {
        Err(unplaceable())
    }

    /// Puts the source back where [`Resumable::place`] said it stood (a checkpointed run resumed).
    ///
    /// # Errors
    /// A write error of the column, or a source that cannot say.
    fn set_place(&mut self, _place: SourcePlace) -> Result<(), OptimError> {
        Err(unplaceable())
    }
}

/// A streamed problem ([`RowStream`](super::RowStream), [`ExampleStream`](crate::ExampleStream)) that can say
/// where it stands between two passes, and continue from there: what a checkpoint of a streamed run keeps
/// beside the run.
pub trait Placed {
    /// Where it stands now (a column costs 8 bytes a row).
    ///
    /// # Errors
    /// As [`Resumable::place`].
    fn place(&self) -> Result<StreamPlace, OptimError>;

    /// Continues from `place` (a checkpoint's), checked against the problem first.
    ///
    /// # Errors
    /// [`OptimError::InvalidParam`] naming what does not fit; as [`Resumable::set_place`].
    fn restore(&self, place: StreamPlace) -> Result<(), OptimError>;
}

/// What a streamed run's evaluations carry from one to the next: the best bound so far, the last
/// evaluation, and the certificate's duals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Carried {
    /// The best lower bound on the optimum so far (every dual-feasible point is one).
    pub(super) best: f64,
    /// The progress (iterations, epochs' bits) and the objective of the last evaluation.
    last: Option<(u64, u64, f64)>,
    /// `w(α)` of the duals in the column (Pegasos' and the subgradient method's certificates; scaled as
    /// the last certificate left them to be).
    pub(super) duals: Option<Vec<f64>>,
}

impl Carried {
    pub(crate) fn new() -> Self {
        Self {
            best: f64::NEG_INFINITY,
            last: None,
            duals: None,
        }
    }

    /// The objective evaluated at `p`, if it was the last evaluation.
    pub(crate) fn at(&self, p: Progress) -> Option<f64> {
        self.last
            .filter(|&(k, e, _)| (k, e) == (p.iteration, p.epoch.to_bits()))
            .map(|l| l.2)
    }

    /// Keeps the evaluation at `p` and the bound, when better than the best so far.
    pub(crate) fn keep(&mut self, p: Progress, objective: f64, bound: f64) {
        self.best = self.best.max(bound);
        self.last = Some((p.iteration, p.epoch.to_bits(), objective));
    }

    /// The certificate of `objective` by the best bound.
    pub(crate) fn certificate(&self, objective: f64) -> Certificate {
        Certificate::of_dual(objective, self.best)
    }

    /// Whether a decoded value fits a problem whose certificate duals `w(α)` have `len` entries.
    pub(crate) fn fits(&self, len: usize) -> bool {
        !self.best.is_nan()
            && self.best != f64::INFINITY
            && self.last.is_none_or(|l| l.2.is_finite())
            && self
                .duals
                .as_ref()
                .is_none_or(|d| d.len() == len && all_finite(d))
    }
}

/// A streamed source's own place between two passes, for a checkpoint: the passes it has made (the order
/// of the next one follows from them) and its column (`None` before a pass wrote it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourcePlace {
    /// Passes made.
    pub passes: u64,
    /// The column, one number per row in the source's own order.
    pub column: Option<Vec<f64>>,
}

/// Where a streamed problem stands between two passes, which a checkpoint keeps beside the run (the state a
/// solver carries is the run's): the source's place, the passes counted, and what the evaluations carry
/// (the best bound, the last evaluation, the certificate's duals).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamPlace {
    passes: u64,
    carried: Carried,
    source: SourcePlace,
}

impl StreamPlace {
    /// The place of a problem that has counted `passes` and carries `carried`, over `source`.
    pub(crate) fn of<X: Resumable + ?Sized>(
        passes: &Cell<u64>,
        carried: &RefCell<Carried>,
        source: &RefCell<&mut X>,
    ) -> Result<Self, OptimError> {
        Ok(Self {
            passes: passes.get(),
            carried: carried.borrow().clone(),
            source: source.borrow_mut().place()?,
        })
    }

    /// Puts such a problem back where this place says, checked first ([`StreamPlace::checked`] with `len`
    /// and `rows`).
    pub(crate) fn restore<X: Resumable + ?Sized>(
        self,
        (len, rows): (usize, Option<usize>),
        passes: &Cell<u64>,
        carried: &RefCell<Carried>,
        source: &RefCell<&mut X>,
    ) -> Result<(), OptimError> {
        let (counted, kept, place) = self.checked(len, rows)?;
        source.borrow_mut().set_place(place)?;
        passes.set(counted);
        *carried.borrow_mut() = kept;
        Ok(())
    }

    /// The parts, checked: the certificate's duals of `len` entries, and either no column or (`rows` given)
    /// one number per row, each a dual or one of streamed DCD's codes.
    fn checked(
        self,
        len: usize,
        rows: Option<usize>,
    ) -> Result<(u64, Carried, SourcePlace), OptimError> {
        fits(self.carried.fits(len), "the certificate's duals")?;
        // Far beyond any run (2^48 passes), so that counting on cannot overflow.
        let bound = 1u64 << 48;
        fits(
            self.passes < bound && self.source.passes < bound,
            "the pass counts",
        )?;
        let column_fits = match (&self.source.column, rows) {
            (None, _) => true,
            (Some(c), Some(n)) => c.len() == n && c.iter().all(|&v| column_code(v)),
            (Some(_), None) => false,
        };
        fits(column_fits, "the column")?;
        Ok((self.passes, self.carried, self.source))
    }
}

/// `f`, a certificate's passes over `source`, in the orders of the training passes that follow, which it
/// leaves as they were ([`Resumable::set_passes`]): a run's weights do not depend on when it was certified,
/// so one resumed from the end of a run its budget stopped trains as one never stopped.
pub(crate) fn certifying<X: Resumable + ?Sized, T>(
    source: &RefCell<&mut X>,
    f: impl FnOnce() -> Result<T, OptimError>,
) -> Result<T, OptimError> {
    let at = source.borrow().passes();
    let out = f();
    source.borrow_mut().set_passes(at);
    out
}

/// The refusal of a source that cannot say where it stands.
fn unplaceable() -> OptimError {
    invalid(
        "checkpoint",
        "a streamed run",
        "needs a source that can say where it stands between passes",
    )
}

/// Whether a column number is one a streamed run writes: a dual (`≥ 0`), a logistic complement (in
/// `(−1, 0)`), a row set aside at a bound (`−1`, `−2`) or a held row's place (`−3 − k`).
fn column_code(v: f64) -> bool {
    use crate::dcd::stream::{HELD, SHRUNK_AT_UPPER, SHRUNK_AT_ZERO};
    v.is_finite()
        && (v >= SHRUNK_AT_ZERO
            || v == SHRUNK_AT_UPPER
            || (v <= HELD && v.fract() == 0.0 && v > -(u32::MAX as f64)))
}
