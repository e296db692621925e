//! MAP inference on pairwise graphs: `argmax_y Σ_i θ_i(y_i) + Σ_{(i,j)} P_e(y_i, y_j)`, exactly on forests
//! (max-product dynamic programming), exactly by enumeration on small graphs, and approximately by loopy
//! max-product with a final local search. The potentials already hold the loss when inference is
//! loss-augmented; nothing here knows about weights or features. Ties go to the lowest label.

use crate::error::StructError;
use crate::oracle::MAX_ENUMERATED;

/// How far below its bound a labelling may be and count as certified (TRW-S's and AD3's): `tol` times the
/// bound's distance from `offset` (at least 1), and never less than 1e-6 of the bound's magnitude. The
/// offset is 0 when decoding (the tolerance is relative to the value) and the truth's score in
/// loss-augmented inference (relative to the hinge, which for small hinges would otherwise be tighter than
/// the value's 1e-6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Tolerance {
    pub tol: f64,
    pub offset: f64,
}

impl Tolerance {
    /// `tol` relative to the value.
    pub const fn of_value(tol: f64) -> Self {
        Self { tol, offset: 0.0 }
    }

    /// The difference allowed at the value `at`.
    pub fn slack(&self, at: f64) -> f64 {
        (self.tol * (at - self.offset).abs().max(1.0)).max(DECODE_TOL * at.abs())
    }
}

/// How far below its bound a labelling of trws and ad3 may be and count as certified when decoding:
/// relative to the value (and the floor of every [`Tolerance`]).
pub(crate) const DECODE_TOL: f64 = 1e-6;

/// The potentials of one graph: `θ` (`n × L`, node-major), per-edge `L × L` tables (`P_e(a, b)` at
/// `a·L + b` for edge `[i, j]` with `y_i = a`, `y_j = b`), one table shared by every edge or one per edge.
#[derive(Debug, Clone, Default)]
pub(crate) struct Potentials {
    pub n_labels: usize,
    pub unary: Vec<f64>,
    pub pair: Vec<f64>,
    pub shared: bool,
}

impl Potentials {
    /// Refuses potentials that are not finite, or whose magnitudes add up beyond `f64::MAX` (weights times
    /// features near it, either sign): no inference method can read a labelling from them (comparisons pass
    /// over NaN, and sums that overflow tie every labelling through them, so the exact methods disagreed).
    /// When every potential's magnitude summed is finite, so is every partial sum the methods form. The
    /// first node whose scores, or whose edge's table, are not finite is named, else the node whose scores
    /// are largest.
    pub fn check_finite(&self, edges: &[[u32; 2]]) -> Result<(), StructError> {
        let p = self;
        let bad = |v: &f64| !v.is_finite();
        let l = p.n_labels.max(1);
        if let Some(at) = p.unary.iter().position(bad) {
            return Err(StructError::NonFiniteScore { position: at / l });
        }
        let table_node = |t: usize| edges.get(t).map_or(0, |e| e[0] as usize);
        if let Some(at) = p.pair.iter().position(bad) {
            return Err(StructError::NonFiniteScore {
                position: table_node(at / (l * l)),
            });
        }
        let largest = |v: &[f64]| v.iter().fold(0.0f64, |m, &t| m.max(t.abs()));
        let tables: f64 = if p.shared {
            largest(&p.pair) * edges.len() as f64
        } else {
            p.pair.chunks_exact(l * l).map(largest).sum()
        };
        let nodes: f64 = p.unary.chunks_exact(l).map(largest).sum();
        if (nodes + tables).is_finite() {
            return Ok(());
        }
        let heaviest = p
            .unary
            .chunks_exact(l)
            .map(largest)
            .enumerate()
            .fold((0, -1.0), |m, (i, v)| if v > m.1 { (i, v) } else { m });
        Err(StructError::NonFiniteScore {
            position: heaviest.0,
        })
    }

    pub fn n_nodes(&self) -> usize {
        self.unary.len() / self.n_labels.max(1)
    }

    /// The `L × L` table of edge `e`.
    #[inline]
    pub fn table(&self, e: usize) -> &[f64] {
        let l2 = self.n_labels * self.n_labels;
        if self.shared {
            &self.pair[..l2]
        } else {
            &self.pair[e * l2..(e + 1) * l2]
        }
    }

    #[inline]
    pub fn node(&self, i: usize) -> &[f64] {
        &self.unary[i * self.n_labels..(i + 1) * self.n_labels]
    }

    /// Every pairwise table transposed (`P_e(a, b)` at `b·L + a`), as the reverse direction reads it.
    pub fn transposed_pairs(&self) -> Vec<f64> {
        let l = self.n_labels;
        let mut out = self.pair.clone();
        for (t, from) in out
            .chunks_exact_mut(l * l)
            .zip(self.pair.chunks_exact(l * l))
        {
            for a in 0..l {
                for b in 0..l {
                    t[b * l + a] = from[a * l + b];
                }
            }
        }
        out
    }

    /// The value of a labelling.
    pub fn value(&self, edges: &[[u32; 2]], y: &[u32]) -> f64 {
        let l = self.n_labels;
        let mut v: f64 = y
            .iter()
            .enumerate()
            .map(|(i, &a)| self.unary[i * l + a as usize])
            .sum();
        for (e, &[i, j]) in edges.iter().enumerate() {
            v += self.table(e)[y[i as usize] as usize * l + y[j as usize] as usize];
        }
        v
    }
}

/// Neighbours in compressed form: for node `i`, `(neighbour, edge, i is the edge's first end)`.
pub(crate) struct Adjacency {
    start: Vec<usize>,
    items: Vec<(u32, u32, bool)>,
}

impl Adjacency {
    pub fn new(n: usize, edges: &[[u32; 2]]) -> Self {
        let mut start = vec![0usize; n + 1];
        for &[i, j] in edges {
            start[i as usize + 1] += 1;
            start[j as usize + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut items = vec![(0u32, 0u32, false); 2 * edges.len()];
        for (e, &[i, j]) in edges.iter().enumerate() {
            items[fill[i as usize]] = (j, e as u32, true);
            fill[i as usize] += 1;
            items[fill[j as usize]] = (i, e as u32, false);
            fill[j as usize] += 1;
        }
        Self { start, items }
    }

    #[inline]
    pub fn of(&self, i: usize) -> &[(u32, u32, bool)] {
        &self.items[self.start[i]..self.start[i + 1]]
    }
}

/// `P_e(y_self, y_other)` read from the table of edge `e`, oriented by whether `self` is the first end.
#[inline]
pub(crate) fn oriented(table: &[f64], l: usize, first: bool, mine: usize, other: usize) -> f64 {
    if first {
        table[mine * l + other]
    } else {
        table[other * l + mine]
    }
}

/// `out(b) = max_a [held(a) + P(a, b)]` for the edge table `P` read from the sending end (`first`: the
/// sender is the edge's first end, so `P(a, b)` is `table[a·L + b]`): the message max-product and TRW-S
/// send, specialised for up to 5 labels.
#[inline(always)]
pub(crate) fn send(held: &[f64], table: &[f64], first: bool, out: &mut [f64]) {
    match held.len() {
        2 => send_n::<2>(held, table, first, out),
        3 => send_n::<3>(held, table, first, out),
        4 => send_n::<4>(held, table, first, out),
        5 => send_n::<5>(held, table, first, out),
        _ => send_any(held, table, first, out),
    }
}

#[inline]
fn send_n<const L: usize>(held: &[f64], table: &[f64], first: bool, out: &mut [f64]) {
    let held: &[f64; L] = held.try_into().expect("L values");
    let table: &[f64] = &table[..L * L];
    let out: &mut [f64; L] = out.try_into().expect("L values");
    for b in 0..L {
        let mut best = f64::NEG_INFINITY;
        for a in 0..L {
            let t = if first {
                table[a * L + b]
            } else {
                table[b * L + a]
            };
            let v = held[a] + t;
            if v > best {
                best = v;
            }
        }
        out[b] = best;
    }
}

#[inline]
fn send_any(held: &[f64], table: &[f64], first: bool, out: &mut [f64]) {
    let l = held.len();
    let (table, out) = (&table[..l * l], &mut out[..l]);
    for (b, o) in out.iter_mut().enumerate() {
        let mut best = f64::NEG_INFINITY;
        for (a, &h) in held.iter().enumerate() {
            let t = if first {
                table[a * l + b]
            } else {
                table[b * l + a]
            };
            let v = h + t;
            if v > best {
                best = v;
            }
        }
        *o = best;
    }
}

/// The first index of the largest value (the lowest label on ties).
#[inline]
pub(crate) fn argmax(v: &[f64]) -> (usize, f64) {
    let mut best = (0, f64::NEG_INFINITY);
    for (k, &x) in v.iter().enumerate() {
        if x > best.1 {
            best = (k, x);
        }
    }
    best
}

/// The first edge, in list order, that closes a cycle with the edges before it (union-find), if any.
pub(crate) fn first_cycle_edge(n: usize, edges: &[[u32; 2]]) -> Option<usize> {
    let mut root: Vec<u32> = (0..n as u32).collect();
    let find = |root: &mut Vec<u32>, mut i: u32| {
        while root[i as usize] != i {
            let up = root[root[i as usize] as usize];
            root[i as usize] = up;
            i = up;
        }
        i
    };
    for (e, &[i, j]) in edges.iter().enumerate() {
        let (a, b) = (find(&mut root, i), find(&mut root, j));
        if a == b {
            return Some(e);
        }
        root[a.max(b) as usize] = a.min(b);
    }
    None
}

/// Exact MAP on a forest by max-product dynamic programming, `O(n·L²)`: each tree is rooted at its lowest
/// node, messages go up in reverse breadth-first order and labels come down.
///
/// # Errors
/// [`StructError::NotAForest`] naming an edge that closes a cycle.
pub(crate) fn exact_tree(
    p: &Potentials,
    edges: &[[u32; 2]],
) -> Result<(Vec<u32>, f64), StructError> {
    let (n, l) = (p.n_nodes(), p.n_labels);
    let adj = Adjacency::new(n, edges);
    // Breadth-first order, each node's parent edge, and the cycle check.
    let mut order = Vec::with_capacity(n);
    let mut parent: Vec<Option<(u32, u32, bool)>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut roots = Vec::new();
    for r in 0..n {
        if seen[r] {
            continue;
        }
        seen[r] = true;
        roots.push(r);
        let first = order.len();
        order.push(r as u32);
        let mut head = first;
        while head < order.len() {
            let i = order[head] as usize;
            head += 1;
            for &(j, e, i_first) in adj.of(i) {
                if parent[i].is_some_and(|(_, pe, _)| pe == e) {
                    continue;
                }
                if seen[j as usize] {
                    return Err(StructError::NotAForest { edge: e as usize });
                }
                seen[j as usize] = true;
                // The child's view of the edge: the child is the first end when `i` is not.
                parent[j as usize] = Some((i as u32, e, !i_first));
                order.push(j);
            }
        }
    }
    let mut belief = p.unary.clone();
    let mut back = vec![0u32; n * l];
    let mut msg = vec![0.0; l];
    for &c in order.iter().rev() {
        let c = c as usize;
        let Some((par, e, c_first)) = parent[c] else {
            continue;
        };
        let table = p.table(e as usize);
        for (yp, m) in msg.iter_mut().enumerate() {
            let mut best = (0u32, f64::NEG_INFINITY);
            for yc in 0..l {
                let v = belief[c * l + yc] + oriented(table, l, c_first, yc, yp);
                if v > best.1 {
                    best = (yc as u32, v);
                }
            }
            *m = best.1;
            back[c * l + yp] = best.0;
        }
        let par = par as usize;
        for (b, m) in belief[par * l..(par + 1) * l].iter_mut().zip(&msg) {
            *b += m;
        }
    }
    let mut y = vec![0u32; n];
    let mut total = 0.0;
    for &r in &roots {
        let (best, v) = argmax(&belief[r * l..(r + 1) * l]);
        y[r] = best as u32;
        total += v;
    }
    for &c in &order {
        let c = c as usize;
        if let Some((par, _, _)) = parent[c] {
            y[c] = back[c * l + y[par as usize] as usize];
        }
    }
    Ok((y, total))
}

/// Exact MAP by enumerating every labelling in lexicographic order (the first best on ties): the reference.
///
/// # Errors
/// [`StructError::TooLarge`] beyond [`MAX_ENUMERATED`] labellings.
pub(crate) fn brute_force(
    p: &Potentials,
    edges: &[[u32; 2]],
) -> Result<(Vec<u32>, f64), StructError> {
    let (n, l) = (p.n_nodes(), p.n_labels);
    let fits = (0..n).try_fold(1usize, |acc, _| {
        acc.checked_mul(l).filter(|&c| c <= MAX_ENUMERATED)
    });
    if fits.is_none() {
        return Err(StructError::TooLarge {
            max: MAX_ENUMERATED,
        });
    }
    let mut y = vec![0u32; n];
    let mut best = (y.clone(), p.value(edges, &y));
    loop {
        let mut t = n;
        loop {
            if t == 0 {
                return Ok(best);
            }
            t -= 1;
            y[t] += 1;
            if (y[t] as usize) < l {
                break;
            }
            y[t] = 0;
        }
        let v = p.value(edges, &y);
        if v > best.1 {
            best = (y.clone(), v);
        }
    }
}

/// Loopy max-product's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LoopySettings {
    pub max_iter: usize,
    pub damping: f64,
    pub tol: f64,
}

/// Approximate MAP by loopy max-product (sequential message updates in edge order, messages normalized to
/// a zero maximum, damped), decoded from the beliefs and then improved by iterated conditional modes until
/// no single node's change raises the value. Returns the labelling, its value and whether the messages
/// converged (changed by at most `tol` in a sweep). Exact on forests once converged.
pub(crate) fn max_product(
    p: &Potentials,
    edges: &[[u32; 2]],
    s: LoopySettings,
) -> (Vec<u32>, f64, bool) {
    let (n, l) = (p.n_nodes(), p.n_labels);
    let adj = Adjacency::new(n, edges);
    // msgs[(2e + d)·L ..]: d = 0 carries edge e's first end to its second, d = 1 the reverse.
    let mut msgs = vec![0.0; 2 * edges.len() * l];
    let mut incoming = p.unary.clone();
    let mut converged = edges.is_empty();
    let reverse = if l <= 5 {
        p.transposed_pairs()
    } else {
        Vec::new()
    };
    for _ in 0..s.max_iter {
        if converged {
            break;
        }
        let state = (&mut msgs[..], &mut incoming[..]);
        let change = match l {
            2 => sweep::<2>(p, &reverse, edges, s.damping, state),
            3 => sweep::<3>(p, &reverse, edges, s.damping, state),
            4 => sweep::<4>(p, &reverse, edges, s.damping, state),
            5 => sweep::<5>(p, &reverse, edges, s.damping, state),
            _ => sweep::<0>(p, &reverse, edges, s.damping, state),
        };
        converged = change <= s.tol;
    }
    let mut y: Vec<u32> = (0..n)
        .map(|i| argmax(&incoming[i * l..(i + 1) * l]).0 as u32)
        .collect();
    improve_locally(p, &adj, &mut y);
    let v = p.value(edges, &y);
    (y, v, converged)
}

/// One sweep of max-product's damped messages over the edges in order, both directions each; returns the
/// largest change of a message value. `N` is the number of labels where it is small (the loops then have
/// constant bounds, and the reverse direction reads `reverse`, the tables transposed, so that both take
/// the maximum over the sender's label row by row: 0.8× the time on the graph bench's grid), 0 for any
/// number.
fn sweep<const N: usize>(
    p: &Potentials,
    reverse: &[f64],
    edges: &[[u32; 2]],
    damping: f64,
    (msgs, incoming): (&mut [f64], &mut [f64]),
) -> f64 {
    if N > 0 {
        let mut change: f64 = 0.0;
        let n2 = N * N;
        for (e, &[a, b]) in edges.iter().enumerate() {
            let at = if p.shared { 0 } else { e * n2 };
            let (a, b) = (a as usize, b as usize);
            let there = message::<N>(&p.pair[at..], damping, (a, b, 2 * e), (msgs, incoming));
            let back = message::<N>(&reverse[at..], damping, (b, a, 2 * e + 1), (msgs, incoming));
            for moved in [there, back] {
                if moved > change {
                    change = moved;
                }
            }
        }
        return change;
    }
    let l = p.n_labels;
    let (mut fresh, mut held) = (vec![0.0; l], vec![0.0; l]);
    let mut change: f64 = 0.0;
    for (e, &[a, b]) in edges.iter().enumerate() {
        let table = p.table(e);
        for d in 0..2 {
            let (from, to, from_first) = if d == 0 {
                (a as usize, b as usize, true)
            } else {
                (b as usize, a as usize, false)
            };
            let slot = (2 * e + d) * l;
            let back = (2 * e + 1 - d) * l;
            // The sender's belief without what the receiver sent it.
            let (sender, returned) = (&incoming[from * l..][..l], &msgs[back..][..l]);
            for yf in 0..l {
                held[yf] = sender[yf] - returned[yf];
            }
            send(&held, table, from_first, &mut fresh);
            let top = fresh
                .iter()
                .fold(f64::NEG_INFINITY, |t, &v| if v > t { v } else { t });
            let (out, into) = (&mut msgs[slot..][..l], &mut incoming[to * l..][..l]);
            for yt in 0..l {
                let old = out[yt];
                let new = (1.0 - damping) * (fresh[yt] - top) + damping * old;
                change = change.max((new - old).abs());
                out[yt] = new;
                into[yt] += new - old;
            }
        }
    }
    change
}

/// One damped message of `N` labels from node `from` to node `to` into slot `slot` (`2e` carries an edge's
/// first end to its second, `2e + 1` the reverse) through `table`, the sender's label by rows; returns its
/// largest change. Plain comparisons, not `f64::max`: the values are finite, and its NaN handling cost a
/// fifth of the sweep.
#[inline(always)]
fn message<const N: usize>(
    table: &[f64],
    damping: f64,
    (from, to, slot): (usize, usize, usize),
    (msgs, incoming): (&mut [f64], &mut [f64]),
) -> f64 {
    let table = &table[..N * N];
    let back = slot ^ 1;
    // The sender's belief without what the receiver sent it.
    let sender: &[f64; N] = incoming[from * N..][..N].try_into().expect("N values");
    let returned: &[f64; N] = msgs[back * N..][..N].try_into().expect("N values");
    let held: [f64; N] = std::array::from_fn(|k| sender[k] - returned[k]);
    let mut fresh = [f64::NEG_INFINITY; N];
    for (&h, row) in held.iter().zip(table.chunks_exact(N)) {
        for (f, &t) in fresh.iter_mut().zip(row) {
            let v = h + t;
            if v > *f {
                *f = v;
            }
        }
    }
    let mut top = f64::NEG_INFINITY;
    for &v in &fresh {
        if v > top {
            top = v;
        }
    }
    let mut change: f64 = 0.0;
    let out: &mut [f64; N] = (&mut msgs[slot * N..][..N]).try_into().expect("N values");
    let mut moves = [0.0; N];
    for ((o, m), &f) in out.iter_mut().zip(&mut moves).zip(&fresh) {
        let new = (1.0 - damping) * (f - top) + damping * *o;
        *m = new - *o;
        let moved = m.abs();
        if moved > change {
            change = moved;
        }
        *o = new;
    }
    let into: &mut [f64; N] = (&mut incoming[to * N..][..N]).try_into().expect("N values");
    for (i, m) in into.iter_mut().zip(&moves) {
        *i += m;
    }
    change
}

/// Iterated conditional modes: each node in turn takes its best label given its neighbours', until a sweep
/// changes nothing (each change strictly raises the value, so this ends; 1,000 sweeps at most, so that
/// rounding cannot make it cycle). A sweep passes over the nodes none of whose neighbours changed since
/// they were last looked at: their best label is the one they hold, so the result is that of full sweeps.
pub(crate) fn improve_locally(p: &Potentials, adj: &Adjacency, y: &mut [u32]) {
    let l = p.n_labels;
    let mut local = vec![0.0; l];
    let mut stale = vec![true; y.len()];
    for _ in 0..1000 {
        let mut changed = false;
        for i in 0..y.len() {
            if !stale[i] {
                continue;
            }
            stale[i] = false;
            local.copy_from_slice(p.node(i));
            for &(j, e, first) in adj.of(i) {
                let table = p.table(e as usize);
                for (a, v) in local.iter_mut().enumerate() {
                    *v += oriented(table, l, first, a, y[j as usize] as usize);
                }
            }
            let (best, v) = argmax(&local);
            if best as u32 != y[i] && v > local[y[i] as usize] {
                y[i] = best as u32;
                changed = true;
                for &(j, _, _) in adj.of(i) {
                    stale[j as usize] = true;
                }
            }
        }
        if !changed {
            return;
        }
    }
}
