//! The worked examples as users see them in `maxmargin demo`.

use maxmargin::worked::{hinge_table, lesson_example, pegasos_hand_rows, pegasos_hand_table};

#[test]
fn pegasos_hand_table_snapshot() {
    let table = pegasos_hand_table().unwrap();
    insta::with_settings!({
        description => "Pegasos C-form, C = 1, A = (2,1) +1, B = (-1,-2) -1, alternating, eta_t = 1/t, w1 = 0",
        info => &"w = (2,1), (1,1/2), (2/3,1/3), (1/2,1/4), (2/5,1/5), (1/2,1/2); margins 0, 4, 5/2, 4/3, 5/4, 4/5",
    }, {
        insta::assert_snapshot!(table);
    });
    let margins: Vec<f64> = pegasos_hand_rows()
        .unwrap()
        .iter()
        .map(|r| r.margin)
        .collect();
    let expected = [0.0, 4.0, 2.5, 4.0 / 3.0, 1.25, 0.8];
    assert!(
        margins
            .iter()
            .zip(expected)
            .all(|(a, b)| (a - b).abs() < 1e-12),
        "{margins:?}"
    );
}

#[test]
fn lesson_example_snapshot() {
    let text = lesson_example().unwrap();
    assert!(!text.contains("WRONG"), "{text}");
    insta::with_settings!({
        description => "batch subgradient, lambda 0.04, constant step 0.12, unregularized intercept, 500 iterations",
        info => &"rows (-2.0,-1) (-1.3,-1) (-0.8,-1) (0.6,1) (1.1,1) (1.8,1); start w = b = 0 (objective 1.0)",
    }, {
        insta::assert_snapshot!(text);
    });
}

#[test]
fn hinge_table_snapshot() {
    insta::with_settings!({
        description => "hinge max(0, 1 - z) vs 0-1 loss (z = 0 counted as a mistake)",
        info => &"z = -2, -1, 0, 0.5, 1, 2: hinge 3, 2, 1, 0.5, 0, 0",
    }, {
        insta::assert_snapshot!(hinge_table());
    });
}
