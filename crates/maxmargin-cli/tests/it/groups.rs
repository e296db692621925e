//! `eval --group-by qid` and `--groups FILE`: per-group measures that add up to the overall counts, with
//! small groups marked.

use super::{fails, heart, ok, s};

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text.trim()).unwrap()
}

#[test]
fn per_group_measures_add_up_to_the_overall_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let data = heart(tmp.path());
    let model = tmp.path().join("h.model");
    ok(&["train", s(&data), "-o", s(&model), "-q"]);
    // Three groups: two large, one of 20 rows (marked).
    let names: String = (0..270)
        .map(|i| match i {
            0..=19 => "clinic-c\n",
            _ if i % 2 == 0 => "clinic-a\n",
            _ => "clinic-b\n",
        })
        .collect();
    let groups = tmp.path().join("groups.txt");
    std::fs::write(&groups, names).unwrap();
    let v = json(&ok(&[
        "eval",
        s(&model),
        s(&data),
        "--groups",
        s(&groups),
        "--json",
    ]));
    let g = v["groups"].as_array().unwrap();
    // In the order of their names, not of the rows (issue 23: groups were printed in file order).
    let names: Vec<&str> = g.iter().map(|x| x["group"].as_str().unwrap()).collect();
    assert_eq!(names, ["clinic-a", "clinic-b", "clinic-c"]);
    for key in [
        "n",
        "correct",
        "true_positive",
        "false_positive",
        "true_negative",
        "false_negative",
    ] {
        let sum: u64 = g.iter().map(|x| x[key].as_u64().unwrap()).sum();
        assert_eq!(sum, v[key].as_u64().unwrap(), "{key}");
    }
    assert_eq!(g[2]["note"], "fewer than 30 rows");
    assert!(g[0]["note"].is_null() && g[1]["note"].is_null());
    let table = ok(&["eval", s(&model), s(&data), "--groups", s(&groups)]);
    assert!(
        table.contains("by group") && table.contains("clinic-b"),
        "{table}"
    );
    // qid: groups by the rows' qid:, and every row needs one.
    let with_qid: String = maxmargin::datasets::HEART_SCALE
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let (label, rest) = l.split_once(' ').unwrap();
            format!("{label} qid:{} {rest}\n", 10 - i % 10)
        })
        .collect();
    let qdata = tmp.path().join("q.svm");
    std::fs::write(&qdata, with_qid).unwrap();
    let v = json(&ok(&[
        "eval",
        s(&model),
        s(&qdata),
        "--group-by",
        "qid",
        "--json",
    ]));
    // Numbers in numeric order: 1, 2, …, 10 (the rows start at qid 10).
    let qids: Vec<&str> = (v["groups"].as_array().unwrap().iter())
        .map(|x| x["group"].as_str().unwrap())
        .collect();
    assert_eq!(qids, ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]);
    let err = fails(&["eval", s(&model), s(&data), "--group-by", "qid"], 1);
    assert!(err.contains(":1: no qid"), "{err}");
    // A groups file of another length, both flags, and a task without groups are refused.
    let short = tmp.path().join("short.txt");
    std::fs::write(&short, "a\nb\n").unwrap();
    let err = fails(&["eval", s(&model), s(&data), "--groups", s(&short)], 1);
    assert!(err.contains("2 group names for the 270 rows"), "{err}");
    fails(
        &[
            "eval",
            s(&model),
            s(&data),
            "--groups",
            s(&short),
            "--group-by",
            "qid",
        ],
        2,
    );
}

#[test]
fn multiclass_groups_and_tasks_without_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (iris, model) = super::iris_model(tmp.path(), "m.model");
    let groups = tmp.path().join("g.txt");
    std::fs::write(
        &groups,
        (0..150)
            .map(|i| if i < 97 { "early\n" } else { "late\n" })
            .collect::<String>(),
    )
    .unwrap();
    let v = json(&ok(&[
        "eval",
        s(&model),
        s(&iris),
        "--groups",
        s(&groups),
        "--json",
    ]));
    let g = v["groups"].as_array().unwrap();
    assert_eq!(g.iter().map(|x| x["n"].as_u64().unwrap()).sum::<u64>(), 150);
    // "late" holds 3 rows of one class (and 50 of another): marked; classes absent from a group are not.
    assert_eq!(g[1]["note"], "fewer than 5 of a class");
    let seq = tmp.path().join("s.dat");
    std::fs::write(&seq, "1 qid:1 1:1\n2 qid:1 2:1\n1 qid:2 1:1\n").unwrap();
    let chain = tmp.path().join("c.model");
    ok(&["train", "--task", "chain", s(&seq), "-o", s(&chain), "-q"]);
    let err = fails(&["eval", s(&chain), s(&seq), "--group-by", "qid"], 1);
    assert!(
        err.contains("apply to binary and multiclass models"),
        "{err}"
    );
}
