//! Whole commands side by side: `maxmargin train` against `liblinear-train` at the loosest ε that reaches the
//! target, timed interleaved, and peak memory.

use super::*;

/// `(seconds, success)` of a command.
pub(super) fn timed(cmd: &mut Command) -> Option<f64> {
    let start = Instant::now();
    let status = cmd.status().ok()?;
    status.success().then(|| start.elapsed().as_secs_f64())
}

/// Peak resident set in KB of a command, by `/usr/bin/time -f %M`.
pub(super) fn peak_kb(cmd: &Command) -> Option<u64> {
    let mut t = Command::new("/usr/bin/time");
    t.args(["-f", "%M"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    let out = t.output().ok()?;
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

/// One side of a whole-command comparison: its name, its command at an ε (none: the program is not
/// installed), and the objective and test accuracy of the model its last run wrote.
pub(super) struct Contender<'a> {
    pub name: &'a str,
    pub run: Option<&'a dyn Fn(f64) -> Command>,
    pub objective: &'a dyn Fn() -> Option<f64>,
    pub accuracy: &'a dyn Fn() -> Option<f64>,
}

/// How each side of a comparison is judged: the objective and the test accuracy of the model its last run
/// wrote.
pub(super) struct Judges<'a> {
    pub ours: (&'a dyn Fn() -> Option<f64>, &'a dyn Fn() -> Option<f64>),
    pub theirs: (&'a dyn Fn() -> Option<f64>, &'a dyn Fn() -> Option<f64>),
}

/// Whole-command comparison: the loosest ε of each program that reaches `target` by its objective, then
/// interleaved timed runs.
pub(super) fn versus(ours: &Contender<'_>, theirs: &Contender<'_>, target: f64) -> Versus {
    // The loosest ε that reaches the target; a run that misses it after more than SWEEP_GIVE_UP seconds
    // (an iteration cap) ends the sweep, since a tighter ε cannot take less.
    let pick = |run: &dyn Fn(f64) -> Command, objective: &dyn Fn() -> Option<f64>| {
        for &e in &EPS_LIST {
            let seconds = timed(&mut run(e))?;
            let o = objective()?;
            if o <= target {
                return Some((e, o));
            }
            if seconds > SWEEP_GIVE_UP {
                return None;
            }
        }
        None
    };
    let mine = ours.run.and_then(|r| pick(r, ours.objective));
    let ours_acc = mine.and_then(|_| (ours.accuracy)());
    let yours = theirs.run.and_then(|t| pick(t, theirs.objective));
    let theirs_acc = yours.and_then(|_| (theirs.accuracy)());
    let (mut to, mut tt) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        if let (Some((e, _)), Some(run)) = (mine, ours.run)
            && let Some(t) = timed(&mut run(e))
        {
            to.push(t);
        }
        if let (Some((e, _)), Some(run)) = (yours, theirs.run)
            && let Some(t) = timed(&mut run(e))
        {
            tt.push(t);
        }
    }
    let ours_seconds = (!to.is_empty()).then(|| median(&mut to));
    let theirs_seconds = (!tt.is_empty()).then(|| median(&mut tt));
    Versus {
        ours: ours.name.into(),
        theirs: theirs.name.into(),
        ours_epsilon: mine.map(|m| m.0),
        theirs_epsilon: yours.map(|m| m.0),
        ours_objective: mine.map(|m| m.1),
        theirs_objective: yours.map(|m| m.1),
        ours_seconds,
        theirs_seconds,
        ratio: ours_seconds.zip(theirs_seconds).map(|(a, b)| a / b),
        ours_peak_kb: mine
            .zip(ours.run)
            .and_then(|((e, _), run)| peak_kb(&run(e))),
        theirs_peak_kb: yours
            .zip(theirs.run)
            .and_then(|((e, _), run)| peak_kb(&run(e))),
        ours_test_accuracy: ours_acc,
        theirs_test_accuracy: theirs_acc,
    }
}

pub(super) fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}
