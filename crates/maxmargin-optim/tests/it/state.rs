//! Issue 23, item 10: a solver state decoded from a checkpoint is checked against the problem before any
//! step reads it. Each state below is a real one, written to JSON, edited as a hostile user would (a vector
//! cut short, an index out of range, a value not finite), and read back: the edit is refused naming the part,
//! the state as written is accepted.

use maxmargin_optim::{
    Bcfw, BcfwParams, Bias, BinaryProblem, CrammerSingerParams, DcdParams, PegasosParams, Solver,
    SsgParams, StructProblem,
};
use maxmargin_struct::MulticlassSpace;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// An edit of a state's JSON, named.
type Edit<'a> = (&'a str, &'a dyn Fn(&mut Value));

/// `edit` applied to `state`'s JSON: the edited state must be refused, the state itself accepted.
fn refuses<P, S>(solver: &S, problem: &P, state: &S::State, edits: &[Edit<'_>])
where
    S: Solver<P>,
    S::State: Serialize + DeserializeOwned,
{
    solver.check_state(problem, state).unwrap();
    for (what, edit) in edits {
        let mut v = serde_json::to_value(state).unwrap();
        // JSON has no infinity (DCD's first-pass bounds): finite stand-ins, which the check accepts.
        for (key, stand_in) in [("pg_max_old", 1e300), ("pg_min_old", -1e300)] {
            if v.get(key).is_some_and(Value::is_null) {
                v[key] = json!(stand_in);
            }
        }
        edit(&mut v);
        let Ok(bad) = serde_json::from_value::<S::State>(v) else {
            panic!("{what}: the edit does not decode");
        };
        let err = solver.check_state(problem, &bad).unwrap_err().to_string();
        assert!(err.contains("checkpoint state"), "{what}: {err}");
    }
}

fn cut(field: &'static str) -> impl Fn(&mut Value) {
    move |v| {
        v[field].as_array_mut().unwrap().pop();
    }
}

fn set(field: &'static str, at: usize, to: Value) -> impl Fn(&mut Value) {
    move |v| v[field][at] = to.clone()
}

#[test]
fn edited_binary_states_are_refused() {
    let (x, y) = crate::dual::binary(40);
    let problem = BinaryProblem::new(&x, &y, crate::lambda(0.05), Bias::Feature).unwrap();
    let mut dcd = DcdParams::new().check().unwrap();
    let st = dcd.init(&problem).unwrap();
    refuses(
        &dcd,
        &problem,
        &st,
        &[
            ("w cut", &cut("w")),
            ("alpha cut", &cut("alpha")),
            ("active out of range", &set("active", 0, json!(1_000_000))),
            ("active repeated", &set("active", 1, json!(0))),
            ("alpha outside its box", &set("alpha", 0, json!(1e9))),
            ("qd of other data", &set("qd", 0, json!(12345.0))),
        ],
    );
    let mut pegasos = PegasosParams::new().check().unwrap();
    let st = pegasos.init(&problem).unwrap();
    refuses(
        &pegasos,
        &problem,
        &st,
        &[
            ("v cut", &cut("v")),
            ("last out of range", &|v: &mut Value| {
                v["last"] = json!([[1_000_000, 0.0]])
            }),
            ("sampler of other data", &|v: &mut Value| {
                v["sampler"]["n"] = json!(41)
            }),
            ("scale zero", &|v: &mut Value| v["s"] = json!(0.0)),
        ],
    );
}

#[test]
fn edited_structural_states_are_refused() {
    let (x, y) = crate::dual::multiclass(60, 4, 3.0);
    let space = MulticlassSpace::new(5, 4).unwrap();
    let problem = StructProblem::new(&space, &x, &y, crate::lambda(0.05)).unwrap();
    let mut cs = CrammerSingerParams::default().check().unwrap();
    let st = cs.init(&problem).unwrap();
    refuses(
        &cs,
        &problem,
        &st,
        &[
            ("w cut", &cut("w")),
            ("alpha cut", &cut("alpha")),
            ("order out of range", &set("order", 0, json!(99))),
            ("active out of range", &set("active", 0, json!(1_000_000))),
            ("sq of other data", &set("sq", 0, json!(-1.0))),
        ],
    );
    let mut bcfw: Bcfw = BcfwParams {
        gap_sampling: true,
        ..BcfwParams::pairwise()
    }
    .check()
    .unwrap();
    let st = bcfw.init(&problem).unwrap();
    let gap_edit = |to: Value| move |v: &mut Value| v["gaps"]["tree"][1] = to.clone();
    let (negative, other_n) = (gap_edit(json!(-1.0)), |v: &mut Value| {
        v["gaps"]["n"] = json!(59)
    });
    refuses(
        &bcfw,
        &problem,
        &st,
        &[
            ("w cut", &cut("w")),
            ("losses cut", &cut("ell_i")),
            ("truth of other data", &cut("psi_truth")),
            ("a negative gap estimate", &negative),
            ("gap estimates of other data", &other_n),
        ],
    );
    let mut ssg = SsgParams::default().check().unwrap();
    let st = ssg.init(&problem).unwrap();
    refuses(
        &ssg,
        &problem,
        &st,
        &[("w cut", &cut("w")), ("sum cut", &cut("sum"))],
    );
}
