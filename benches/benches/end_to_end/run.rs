//! One dataset end to end: its optimum, every solver's curve, the commands side by side.

use super::*;

#[allow(clippy::too_many_lines)]
pub(super) fn run_dataset(
    ds: &Dataset,
    dir: &Path,
    tmp: &Path,
    ours_bin: &Path,
    have_liblinear: bool,
) -> Option<Report> {
    let train = scaled(libsvm::read(&dir.join(ds.train)).ok()?, ds.scale);
    let (train, test) = match ds.test {
        Some(t) => (train, scaled(libsvm::read(&dir.join(t)).ok()?, ds.scale)),
        None => split(&train),
    };
    let train_file = tmp.join(format!("{}.train.svm", ds.name));
    let test_file = tmp.join(format!("{}.test.svm", ds.name));
    libsvm::write(&train_file, &train).ok()?;
    libsvm::write(&test_file, &test).ok()?;
    let n = train.n_samples();
    let d = train.x.n_features();
    let nnz = train.x.nnz();
    let lambda = Lambda::new(1.0 / (C * n as f64)).ok()?;
    eprintln!("end_to_end: {} ({n} x {d}, {nnz} non-zeros)", ds.name);
    let ours_model = tmp.join(format!("{}.model", ds.name));
    let theirs_model = tmp.join(format!("{}.liblinear", ds.name));
    let mut report = Report {
        name: ds.name.into(),
        n_train: n,
        n_test: test.n_samples(),
        n_features: d,
        nnz,
        csr_bytes: nnz * 12 + (n + 1) * 8 + n * 8,
        optimum: f64::NAN,
        optimum_gap: f64::NAN,
        ovr_optimum: None,
        curves: Vec::new(),
        versus: Vec::new(),
    };
    let key = format!("{}:C={C}:n={n}:nnz={nnz}", ds.name);
    let train_cmd = |extra: &[&str], eps: f64| {
        let mut c = Command::new(ours_bin);
        c.args(["train", &s(&train_file), "-o", &s(&ours_model)])
            .args(["-c", &C.to_string(), "--epsilon", &eps.to_string()])
            .args(["--eval-every", "1e9", "--quiet"])
            .args(extra);
        c
    };
    let liblinear_cmd = |solver: &'static str| {
        let (train_file, theirs_model) = (train_file.clone(), theirs_model.clone());
        move |eps: f64| {
            let mut c = Command::new("liblinear-train");
            c.args(["-q", "-s", solver, "-c", &C.to_string(), "-B", "1"])
                .args(["-e", &eps.to_string()])
                .args([s(&train_file), s(&theirs_model)]);
            c
        }
    };
    // Our `train` with `extra` arguments against LIBLINEAR's `-s solver` (not run when it is missing).
    let compare =
        |name: &str, extra: &[&str], solver: &'static str, judges: &Judges<'_>, target: f64| {
            let ours = |e: f64| train_cmd(extra, e);
            let ours = Contender {
                name,
                run: Some(&ours),
                objective: judges.ours.0,
                accuracy: judges.ours.1,
            };
            let theirs_name = format!("liblinear -s {solver}");
            let theirs = liblinear_cmd(solver);
            let theirs = Contender {
                name: &theirs_name,
                run: have_liblinear.then_some(&theirs),
                objective: judges.theirs.0,
                accuracy: judges.theirs.1,
            };
            versus(&ours, &theirs, target)
        };
    match ds.kind {
        Kind::Binary => {
            let labels = BinaryLabels::from_labels(&train.source, &train.labels).ok()?;
            let y = labels.targets(&train).ok()?;
            let y_test: Vec<f64> = test
                .labels
                .iter()
                .map(|&l| if l == labels.positive { 1.0 } else { -1.0 })
                .collect();
            let problem = BinaryProblem::new(&train.x, &y, lambda, Bias::Feature).ok()?;
            let (optimum, gap) = cached(&key, || {
                let mut dcd = DcdParams::new().epsilon(1e-6).check().ok()?;
                let mut st = dcd.init(&problem).ok()?;
                let start = Instant::now();
                while dcd.stop(&st).is_none() && start.elapsed().as_secs_f64() < OPTIMUM_SECONDS {
                    dcd.step(&problem, &mut st).ok()?;
                }
                let o = dcd.objective(&problem, &st).ok()?;
                Some((o, gap_at(&dcd, &problem, &st, o)?))
            })?;
            report.optimum = optimum;
            report.optimum_gap = gap;
            let target = optimum * (1.0 + TARGET);
            let objective = |w: &LinearWeights| problem.objective(w);
            let accuracy = |w: &LinearWeights| binary_accuracy(&test.x, &y_test, w);
            let judge = Judge {
                problem: &problem,
                objective: &objective,
                accuracy: &accuracy,
                target,
            };
            let dcd = |blocks: usize| DcdParams::new().epsilon(1e-9).blocks(blocks);
            let runs: Vec<Option<Curve>> = vec![
                judge.curve("dcd", dcd(1).check().ok()?, 1e6),
                judge.curve("dcd --blocks 2 (all cores)", dcd(2).check().ok()?, 1e6),
                judge.curve("pegasos", PegasosParams::new().check().ok()?, 200.0),
                judge.curve("subgradient", SubgradientParams::new().check().ok()?, 200.0),
            ];
            report.curves = runs.into_iter().flatten().collect();
            let ours_objective = || {
                let m = maxmargin::LinearModel::load(&ours_model).ok()?;
                m.objective(&train, lambda.get()).ok()
            };
            let ours_accuracy = || {
                let m = maxmargin::LinearModel::load(&ours_model).ok()?;
                m.evaluate(&test, None).ok().map(|e| e.accuracy)
            };
            let theirs_weights = || {
                let m = liblinear::Model::read(&theirs_model)?;
                let (w, b) = m.column(0, d);
                // LIBLINEAR's first label is its +1 class.
                let sign = if m.labels.first() == Some(&labels.positive) {
                    1.0
                } else {
                    -1.0
                };
                Some(LinearWeights {
                    w: w.iter().map(|v| v * sign).collect(),
                    b: b * sign,
                })
            };
            let theirs_objective =
                || theirs_weights().map(|w| binary_objective(&train.x, &y, lambda, &w));
            let theirs_accuracy =
                || theirs_weights().map(|w| binary_accuracy(&test.x, &y_test, &w));
            let judges = Judges {
                ours: (&ours_objective, &ours_accuracy),
                theirs: (&theirs_objective, &theirs_accuracy),
            };
            for (name, extra) in [
                ("dcd, 1 thread", vec!["--solver", "dcd", "--threads", "1"]),
                ("dcd, all cores", vec!["--solver", "dcd"]),
                (
                    "dcd --blocks 2, all cores",
                    vec!["--solver", "dcd", "--blocks", "2"],
                ),
            ] {
                report
                    .versus
                    .push(compare(name, &extra, "3", &judges, target));
            }
        }
        Kind::Multiclass => {
            let classes = ClassLabels::from_labels(&train.source, &train.labels).ok()?;
            let k = classes.len();
            let y = classes.indices(&train).ok()?;
            let y_test: Vec<u32> = test
                .labels
                .iter()
                .map(|l| classes.classes.iter().position(|c| c == l).unwrap_or(k) as u32)
                .collect();
            let x = with_bias(&train.x, d);
            let x_test = with_bias(&test.x, d);
            let space = MulticlassSpace::new(d + 1, k).ok()?;
            let problem = StructProblem::new(&space, &x, &y, lambda).ok()?;
            let (optimum, gap) = cached(&key, || {
                let mut cs = CrammerSingerParams {
                    epsilon: 1e-5,
                    ..CrammerSingerParams::default()
                }
                .check()
                .ok()?;
                let mut st = cs.init(&problem).ok()?;
                let start = Instant::now();
                let mut best = f64::INFINITY;
                let mut gap = f64::NAN;
                let mut next_eval = 0.0;
                while cs.stop(&st).is_none() && start.elapsed().as_secs_f64() < OPTIMUM_SECONDS {
                    cs.step(&problem, &mut st).ok()?;
                    let secs = start.elapsed().as_secs_f64();
                    if secs >= next_eval {
                        next_eval = secs + 5.0;
                        let o = cs.objective(&problem, &st).ok()?;
                        if o < best {
                            best = o;
                            gap = gap_at(&cs, &problem, &st, o)?;
                        }
                    }
                }
                let o = cs.objective(&problem, &st).ok()?;
                if o < best {
                    best = o;
                    gap = gap_at(&cs, &problem, &st, o)?;
                }
                Some((best, gap))
            })?;
            report.optimum = optimum;
            report.optimum_gap = gap;
            let target = optimum * (1.0 + TARGET);
            let objective = |w: &Vec<f64>| problem.primal(w).unwrap_or(f64::INFINITY);
            let accuracy = |w: &Vec<f64>| multiclass_accuracy(&x_test, &y_test, w, k);
            let judge = Judge {
                problem: &problem,
                objective: &objective,
                accuracy: &accuracy,
                target,
            };
            let runs: Vec<Option<Curve>> = vec![
                judge.curve(
                    "cs (dcd)",
                    CrammerSingerParams {
                        epsilon: 1e-9,
                        ..CrammerSingerParams::default()
                    }
                    .check()
                    .ok()?,
                    1e6,
                ),
                judge.curve(
                    "bcfw",
                    BcfwParams {
                        gap_tolerance: None,
                        gap_every: 1e12,
                        ..BcfwParams::default()
                    }
                    .check()
                    .ok()?,
                    1e6,
                ),
                judge.curve(
                    "oneslack",
                    OneSlackParams {
                        epsilon: 1e-9,
                        ..OneSlackParams::default()
                    }
                    .check()
                    .ok()?,
                    1e6,
                ),
                judge.curve("ssg", SsgParams::default().check().ok()?, 500.0),
            ];
            report.curves = runs.into_iter().flatten().collect();
            // Whole commands: Crammer–Singer against -s 4.
            let cs_objective = |w: &[f64]| problem.primal(w).ok();
            let ours_weights = || {
                let m = maxmargin::StructuredModel::load(&ours_model).ok()?;
                Some(m.w)
            };
            let theirs_weights = || {
                let m = liblinear::Model::read(&theirs_model)?;
                // Our class order: `classes.classes`; LIBLINEAR's: its label line.
                let mut w = vec![0.0; (d + 1) * k];
                for (m_ours, c) in classes.classes.iter().enumerate() {
                    let col = m.labels.iter().position(|l| l == c)?;
                    let (wc, b) = m.column(col, d);
                    w[m_ours * (d + 1)..m_ours * (d + 1) + d].copy_from_slice(&wc);
                    w[m_ours * (d + 1) + d] = b;
                }
                Some(w)
            };
            let ours_objective = || ours_weights().and_then(|w| cs_objective(&w));
            let theirs_objective = || theirs_weights().and_then(|w| cs_objective(&w));
            let ours_accuracy =
                || ours_weights().map(|w| multiclass_accuracy(&x_test, &y_test, &w, k));
            let theirs_accuracy =
                || theirs_weights().map(|w| multiclass_accuracy(&x_test, &y_test, &w, k));
            let judges = Judges {
                ours: (&ours_objective, &ours_accuracy),
                theirs: (&theirs_objective, &theirs_accuracy),
            };
            let extra = [
                "--task",
                "multiclass",
                "--solver",
                "dcd",
                "--threads",
                "1",
                "--max-passes",
                "20000",
            ];
            let cs = compare("cs (dcd), 1 thread", &extra, "4", &judges, target);
            report.versus.push(cs);
            // One-vs-rest against -s 3: the objective is the sum of the binary ones.
            let ovr_objective = |w: &[f64]| -> f64 {
                (0..k)
                    .map(|m| {
                        let ym: Vec<f64> = y
                            .iter()
                            .map(|&c| if c as usize == m { 1.0 } else { -1.0 })
                            .collect();
                        let block = &w[m * (d + 1)..(m + 1) * (d + 1)];
                        binary_objective(
                            &train.x,
                            &ym,
                            lambda,
                            &LinearWeights {
                                w: block[..d].to_vec(),
                                b: block[d],
                            },
                        )
                    })
                    .sum()
            };
            let ovr_opt = cached(&format!("{key}:ovr"), || {
                let fits = maxmargin::optim::ovr::OneVsRest {
                    lambda,
                    bias: Bias::Feature,
                    loss: maxmargin::optim::BinaryLoss::Hinge,
                    dcd: DcdParams::new().epsilon(1e-6),
                    budget: maxmargin::optim::Budget::epochs(1e6)
                        .evaluating_every(1e9)
                        .with_seconds(OPTIMUM_SECONDS / k as f64),
                    gap_target: None,
                }
                .fit(
                    &train.x,
                    &y.iter().map(|&c| c as usize).collect::<Vec<_>>(),
                    k,
                )
                .ok()?;
                Some((fits.iter().map(|f| f.objective).sum(), f64::NAN))
            });
            if let Some((ovr_opt, _)) = ovr_opt {
                report.ovr_optimum = Some(ovr_opt);
                let ours_objective = || ours_weights().map(|w| ovr_objective(&w));
                let theirs_objective = || theirs_weights().map(|w| ovr_objective(&w));
                let judges = Judges {
                    ours: (&ours_objective, &ours_accuracy),
                    theirs: (&theirs_objective, &theirs_accuracy),
                };
                for (name, threads) in [("ovr, 1 thread", Some("1")), ("ovr, all cores", None)] {
                    let mut extra = vec!["--task", "multiclass", "--solver", "ovr"];
                    if let Some(t) = threads {
                        extra.extend(["--threads", t]);
                    }
                    let target = ovr_opt * (1.0 + TARGET);
                    report
                        .versus
                        .push(compare(name, &extra, "3", &judges, target));
                }
            }
        }
    }
    plot(&report);
    Some(report)
}

/// The duality gap `solver` certifies at `st` with primal `objective` (NaN: it certifies none).
fn gap_at<P, S: Solver<P>>(solver: &S, problem: &P, st: &S::State, objective: f64) -> Option<f64> {
    let certificate = solver.certificate(problem, st, objective).ok()?;
    Some(certificate.gap.unwrap_or(f64::NAN))
}
