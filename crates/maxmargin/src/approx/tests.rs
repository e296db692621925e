//! The maps against the kernels they approximate, seeds, folding and limits.
use super::*;

fn rows(n: usize, d: usize, seed: u64) -> SparseRows {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let data: Vec<Vec<f64>> = (0..n)
        .map(|_| (0..d).map(|_| rng.random::<f64>() - 0.5).collect())
        .collect();
    let refs: Vec<&[f64]> = data.iter().map(|r| r.as_slice()).collect();
    SparseRows::from_dense_rows(&refs).unwrap()
}

/// An approximation of the RBF kernel with this γ.
fn rbf(method: ApproxMethod, components: usize, gamma: f64) -> Approximation {
    let mut a = Approximation::new(method, components);
    a.kernel.gamma = Some(gamma);
    a
}

fn gram_error(x: &SparseRows, z: &SparseRows, kernel: Kernel) -> f64 {
    let mut worst = 0.0f64;
    for i in 0..x.n_rows() {
        for j in 0..x.n_rows() {
            let exact = kernel.eval(x.row(i), x.row(j));
            let approx = z.row(i).dot_sparse(&z.row(j));
            worst = worst.max((exact - approx).abs());
        }
    }
    worst
}

#[test]
fn nystroem_with_every_row_a_landmark_reproduces_the_kernel() {
    let x = rows(30, 4, 1);
    let a = rbf(ApproxMethod::Nystroem, 100, 0.7);
    let map = a.fit(&x, 3).unwrap();
    assert_eq!(map.components(), 30);
    let z = map.transform(&x).unwrap();
    assert!(gram_error(&x, &z, Kernel::Rbf { gamma: 0.7 }) < 1e-6);
}

#[test]
fn nystroem_folds_into_the_expansion_it_equals() {
    let x = rows(40, 3, 2);
    let FittedMap::Nystroem(n) = Approximation::new(ApproxMethod::Nystroem, 10)
        .fit(&x, 0)
        .unwrap()
    else {
        panic!("asked for nystroem")
    };
    let z = n.transform(&x).unwrap();
    let w: Vec<f64> = (0..10).map(|k| (k as f64 - 4.5) / 3.0).collect();
    let c = n.fold(&w);
    for i in 0..x.n_rows() {
        let linear = z.row(i).dot(&w);
        let expansion: f64 = n
            .landmarks
            .rows()
            .zip(&c)
            .map(|(l, c)| c * n.kernel.eval(l, x.row(i)))
            .sum();
        assert!((linear - expansion).abs() < 1e-9, "{linear} {expansion}");
    }
}

#[test]
fn fourier_features_approach_the_rbf_kernel_and_are_seeded() {
    let x = rows(20, 5, 4);
    let a = rbf(ApproxMethod::Rff, 20_000, 0.5);
    let z = a.fit(&x, 9).unwrap().transform(&x).unwrap();
    assert!(gram_error(&x, &z, Kernel::Rbf { gamma: 0.5 }) < 0.05);
    assert_eq!(z, a.fit(&x, 9).unwrap().transform(&x).unwrap());
    assert_ne!(z, a.fit(&x, 10).unwrap().transform(&x).unwrap());
    let FittedMap::Fourier(f) = a.fit(&x, 9).unwrap() else {
        panic!("asked for rff")
    };
    let mut one = vec![0.0; f.components()];
    f.map_into(x.row(7), &mut one);
    assert_eq!(one.as_slice(), z.row(7).values());
    assert_eq!(f.invalid(20_000), None);
    assert!(f.invalid(3).is_some());
}

#[test]
fn mapped_rows_beyond_the_limit_are_refused_counting_each_methods_dimension() {
    assert_eq!(
        Approximation::new(ApproxMethod::Nystroem, 500).dimension(100),
        100
    );
    assert_eq!(
        Approximation::new(ApproxMethod::Rff, 500).dimension(100),
        500
    );
    assert!(crate::limits::check_mapped_rows(1 << 20, 2000).is_err());
    assert!(crate::limits::check_mapped_rows(1 << 20, 1000).is_ok());
}

#[test]
fn fourier_features_refuse_other_kernels_and_huge_maps() {
    let mut a = Approximation::new(ApproxMethod::Rff, 10);
    a.kernel.kind = crate::linear::KernelKind::Poly;
    assert!(a.check().unwrap_err().to_string().contains("nystroem"));
    let mut wide = SparseRows::new();
    wide.push_row(&[1_000_000], &[1.0]).unwrap();
    let e = Approximation::new(ApproxMethod::Rff, 1000)
        .fit(&wide, 0)
        .unwrap_err();
    assert!(e.to_string().contains("1 GiB"), "{e}");
}
