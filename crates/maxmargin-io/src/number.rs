//! Numbers as the commands print them.

/// A label or value as the commands print it: Rust's shortest round-trip form (`1`, `-1`, `0.25`), in
/// exponent form (`1e300`, `2.5e-7`) where that would run to more than about twenty digits, so a label of
/// `1e300` is not printed as a 301-digit integer. Either form reads back to the same `f64`.
///
/// # Examples
/// ```
/// use maxmargin_io::libsvm::format_number;
/// assert_eq!(format_number(1.0), "1");
/// assert_eq!(format_number(-0.25), "-0.25");
/// assert_eq!(format_number(1e300), "1e300");
/// assert_eq!(format_number(2.5e-7), "2.5e-7");
/// ```
pub fn format_number(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a.is_finite() && !(1e-5..1e16).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}
