//! The quadratic program of one pairwise factor in AD3, by an active set over its configurations (Martins
//! et al. 2015, Section 6).

/// A ridge on `μ` so that configurations whose indicator vectors are affinely dependent never make the
/// system singular.
const RIDGE: f64 = 1e-10;

/// The quadratic program of one pairwise factor, by an active set over its `L²` configurations:
/// `min_{μ ∈ Δ} ½‖Mμ − v‖² + (ridge/2)‖μ‖² − θ·μ/η`, where column `(a, b)` of `M` is `e_a ⊕ e_b`. Keeps its
/// buffers across calls (no allocation once they have grown).
pub(super) struct FactorQp {
    l: usize,
    active: Vec<usize>,
    mu: Vec<f64>,
    /// The copies `q = Mμ` (first end's `L` entries, then the second's).
    pub q: Vec<f64>,
    system: Vec<f64>,
    rhs: Vec<f64>,
    /// The minimizer on the active set's affine hull.
    target: Vec<f64>,
    /// Which configurations are in the active set (`L²`, all false between calls).
    marked: Vec<bool>,
    /// `q − v`, first end then second.
    residual: Vec<f64>,
}

impl FactorQp {
    pub fn new(l: usize) -> Self {
        Self {
            l,
            active: Vec::new(),
            mu: Vec::new(),
            q: vec![0.0; 2 * l],
            system: Vec::new(),
            rhs: Vec::new(),
            target: Vec::new(),
            marked: vec![false; l * l],
            residual: vec![0.0; 2 * l],
        }
    }

    fn update_q(&mut self) {
        self.q.fill(0.0);
        for (&c, &m) in self.active.iter().zip(&self.mu) {
            self.q[c / self.l] += m;
            self.q[self.l + c % self.l] += m;
        }
    }

    /// Solves the factor's program, starting from the active set and weights in `warm` (the factor's
    /// solution at the previous iteration, which changes little: Section 6 of the paper) or, when it is
    /// empty, from the best single configuration of the linear part; leaves the solution in `warm`.
    pub fn solve(
        &mut self,
        table: &[f64],
        eta: f64,
        v: &[f64],
        allowed: (&[bool], &[bool]),
        warm: &mut (Vec<usize>, Vec<f64>),
    ) {
        let l = self.l;
        let ok = |c: usize| allowed.0[c / l] && allowed.1[c % l];
        // The factor's own vectors become the working set for the call (swapped, not copied).
        std::mem::swap(&mut self.active, &mut warm.0);
        std::mem::swap(&mut self.mu, &mut warm.1);
        if self.active.is_empty() {
            let first = (0..l * l)
                .filter(|&c| ok(c))
                .max_by(|&x, &y| {
                    let s = |c: usize| table[c] / eta + v[c / l] + v[l + c % l];
                    s(x).total_cmp(&s(y)).then(y.cmp(&x))
                })
                .unwrap_or(0);
            self.active.push(first);
            self.mu.push(1.0);
        }
        self.update_q();
        self.iterate(table, eta, v, allowed);
        std::mem::swap(&mut self.active, &mut warm.0);
        std::mem::swap(&mut self.mu, &mut warm.1);
    }

    fn iterate(&mut self, table: &[f64], eta: f64, v: &[f64], (ai, aj): (&[bool], &[bool])) {
        let l = self.l;
        let inv_eta = 1.0 / eta;
        // Whether `mu` is known to minimize over the active set's hull (a full step was just taken).
        let mut on_hull = false;
        for _ in 0..(4 * l * l + 20) {
            let tau = if on_hull {
                self.tau(table, inv_eta, v)
            } else {
                let Some(tau) = self.equality_solution(table, inv_eta, v) else {
                    break;
                };
                let same = self
                    .target
                    .iter()
                    .zip(&self.mu)
                    .all(|(t, m)| (t - m).abs() <= 1e-14);
                if !same {
                    on_hull = self.step_to_target();
                    continue;
                }
                tau
            };
            on_hull = false;
            // Optimal on the active set: add the most violated configuration, or stop.
            for (r, (q, x)) in self.residual.iter_mut().zip(self.q.iter().zip(v)) {
                *r = q - x;
            }
            for &c in &self.active {
                self.marked[c] = true;
            }
            let mut worst = (usize::MAX, -tau - 1e-12);
            for a in (0..l).filter(|&a| ai[a]) {
                let (ra, row) = (self.residual[a], &table[a * l..(a + 1) * l]);
                for b in (0..l).filter(|&b| aj[b]) {
                    let g = ra + self.residual[l + b] - row[b] * inv_eta;
                    if g < worst.1 && !self.marked[a * l + b] {
                        worst = (a * l + b, g);
                    }
                }
            }
            for &c in &self.active {
                self.marked[c] = false;
            }
            if worst.0 == usize::MAX {
                return;
            }
            self.active.push(worst.0);
            self.mu.push(0.0);
        }
    }

    /// The multiplier of `Σμ = 1` at a minimizer on the active set's hull: every active configuration's
    /// gradient equals `−τ` there, so any one of them gives it (the ridge term included).
    fn tau(&self, table: &[f64], inv_eta: f64, v: &[f64]) -> f64 {
        let l = self.l;
        let (c, m) = (self.active[0], self.mu[0]);
        let (a, b) = (c / l, c % l);
        -((self.q[a] - v[a]) + (self.q[l + b] - v[l + b]) + RIDGE * m - table[c] * inv_eta)
    }

    /// Moves `mu` towards `target` until a weight reaches zero (that configuration leaves the set); returns
    /// whether the whole step was taken (then `mu` is the hull's minimizer).
    fn step_to_target(&mut self) -> bool {
        let mut step = 1.0;
        let mut blocking = None;
        for (k, (&t, &m)) in self.target.iter().zip(&self.mu).enumerate() {
            if t < 0.0 && m - t > 0.0 {
                let s = m / (m - t);
                if s < step {
                    step = s;
                    blocking = Some(k);
                }
            }
        }
        for (m, t) in self.mu.iter_mut().zip(&self.target) {
            *m += step * (t - *m);
        }
        if let Some(k) = blocking {
            self.active.swap_remove(k);
            self.mu.swap_remove(k);
        }
        let total: f64 = self.mu.iter().sum();
        for m in &mut self.mu {
            *m = m.max(0.0) / total;
        }
        self.update_q();
        blocking.is_none()
    }

    /// The minimizer on the active set's affine hull (into `target`) and the multiplier of `Σμ = 1`, by
    /// Gaussian elimination with partial pivoting on the KKT system (`None` if it is numerically singular).
    fn equality_solution(&mut self, table: &[f64], inv_eta: f64, v: &[f64]) -> Option<f64> {
        let (l, k) = (self.l, self.active.len());
        if k == 1 {
            // One configuration: its weight is 1, and its row gives the multiplier.
            let s = self.active[0];
            self.target.clear();
            self.target.push(1.0);
            return Some(v[s / l] + v[l + s % l] + table[s] * inv_eta - 2.0 - RIDGE);
        }
        let m = k + 1;
        self.system.clear();
        self.system.resize(m * m, 0.0);
        self.rhs.clear();
        self.rhs.resize(m, 0.0);
        for (r, &s) in self.active.iter().enumerate() {
            for (c, &t) in self.active.iter().enumerate() {
                let overlap =
                    f64::from(u8::from(s / l == t / l)) + f64::from(u8::from(s % l == t % l));
                self.system[r * m + c] = overlap + if r == c { RIDGE } else { 0.0 };
            }
            self.system[r * m + k] = 1.0;
            self.system[k * m + r] = 1.0;
            self.rhs[r] = v[s / l] + v[l + s % l] + table[s] * inv_eta;
        }
        self.rhs[k] = 1.0;
        let (a, b) = (&mut self.system, &mut self.rhs);
        for col in 0..m {
            let pivot =
                (col..m).max_by(|&x, &y| a[x * m + col].abs().total_cmp(&a[y * m + col].abs()))?;
            if a[pivot * m + col].abs() < 1e-13 {
                return None;
            }
            if pivot != col {
                for c in 0..m {
                    a.swap(pivot * m + c, col * m + c);
                }
                b.swap(pivot, col);
            }
            for r in col + 1..m {
                let f = a[r * m + col] / a[col * m + col];
                if f != 0.0 {
                    for c in col..m {
                        a[r * m + c] -= f * a[col * m + c];
                    }
                    b[r] -= f * b[col];
                }
            }
        }
        let x = &mut self.target;
        x.clear();
        x.resize(m, 0.0);
        for r in (0..m).rev() {
            let s: f64 = (r + 1..m).map(|c| a[r * m + c] * x[c]).sum();
            x[r] = (b[r] - s) / a[r * m + r];
        }
        x.pop()
    }
}
