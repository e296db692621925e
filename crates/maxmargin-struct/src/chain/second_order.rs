//! Viterbi for second-order chains: the states are pairs of neighbouring tags, so a position's transition
//! scores a triple `(y_{t−2}, y_{t−1}, y_t)`, `O(T·L³)`.
//!
//! `δ_t[k·L + l]` is the best score of a prefix ending in `y_{t−1} = k, y_t = l`:
//! `δ_1[k, l] = u_0[k] + start[k] + A_1[k, l] + u_1[l]` and, for `t ≥ 2`,
//! `δ_t[k, l] = max_j δ_{t−1}[j, k] + B[j, k, l] + A_t[k, l] + u_t[l]` (ties to the lowest `j`). A
//! one-position sequence has no pair and is decoded as a first-order chain.

use super::{ChainSpace, Scratch, argmax};
use crate::sequence::Sequence;

impl ChainSpace {
    /// The weight index of the triple `t[0] → t[1] → t[2]`.
    pub(super) fn triple(&self, t: &[u32]) -> usize {
        let l = self.n_labels();
        self.second() + (t[0] as usize * l + t[1] as usize) * l + t[2] as usize
    }

    /// Second-order Viterbi over the unary scores in `s.unary`; ties go to the lowest earlier label at each
    /// step and to the lowest last pair `(y_{T−2}, y_{T−1})` at the end.
    pub(super) fn viterbi2(&self, w: &[f64], x: &Sequence, s: &mut Scratch) -> (Vec<u32>, f64) {
        let t_len = x.len();
        if t_len < 2 {
            return self.viterbi1(w, x, s);
        }
        let l = self.n_labels();
        let ll = l * l;
        let trans = &w[self.trans()..self.trans() + ll];
        let triples = &w[self.second()..self.second() + ll * l];
        // δ_1 over pairs (y_0, y_1).
        s.best.clear();
        s.best.extend_from_slice(&s.unary[..l]);
        self.add_start(w, &mut s.best);
        let into1: &[f64] = if self.fill_transitions(w, &x[1], &mut s.pair) {
            &s.pair
        } else {
            trans
        };
        s.delta.clear();
        s.delta.resize(ll, 0.0);
        for k in 0..l {
            for m in 0..l {
                s.delta[k * l + m] = s.best[k] + into1[k * l + m] + s.unary[l + m];
            }
        }
        s.back.clear();
        s.back.resize(t_len * ll, 0);
        s.next.clear();
        s.next.resize(ll, 0.0);
        s.best.resize(l, 0.0);
        s.arg.clear();
        s.arg.resize(l, 0);
        for (t, xt) in x.iter().enumerate().skip(2) {
            let into: &[f64] = if self.fill_transitions(w, xt, &mut s.pair) {
                &s.pair
            } else {
                trans
            };
            let unary = &s.unary[t * l..(t + 1) * l];
            for k in 0..l {
                s.best.fill(f64::NEG_INFINITY);
                s.arg.fill(0);
                // Rows of `B` are contiguous in the last tag: for each earlier tag j, one pass over l.
                for j in 0..l {
                    let dj = s.delta[j * l + k];
                    let row = &triples[(j * l + k) * l..(j * l + k + 1) * l];
                    for ((b, a), r) in s.best.iter_mut().zip(s.arg.iter_mut()).zip(row) {
                        let v = dj + r;
                        if v > *b {
                            *b = v;
                            *a = j as u32;
                        }
                    }
                }
                for m in 0..l {
                    s.next[k * l + m] = s.best[m] + into[k * l + m] + unary[m];
                    s.back[t * ll + k * l + m] = s.arg[m];
                }
            }
            std::mem::swap(&mut s.delta, &mut s.next);
        }
        if let Some(start) = self.start() {
            let end = &w[start + l..start + 2 * l];
            for (p, d) in s.delta.iter_mut().enumerate() {
                *d += end[p % l];
            }
        }
        let (last, value) = argmax(&s.delta);
        let mut out = vec![0u32; t_len];
        out[t_len - 2] = last / l as u32;
        out[t_len - 1] = last % l as u32;
        for t in (2..t_len).rev() {
            out[t - 2] = s.back[t * ll + out[t - 1] as usize * l + out[t] as usize];
        }
        (out, value)
    }
}
