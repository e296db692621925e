//! Branch and bound over AD3's relaxations, each branch starting from its parent's state.

use super::{Ad3Result, Ad3Settings, Admm, Problem};
use crate::graph::infer::{Potentials, argmax};
use crate::graph::trws::TrwsResult;

/// AD3, then, while the relaxation does not meet the labelling, depth-first branch and bound on the most
/// fractional node (that node fixed to its likeliest label, then that label forbidden), pruning branches
/// whose dual bound is within the tolerance of the best labelling, over at most `branches` relaxations in
/// all. The bound returned is the largest bound of every branch, open or closed (still a bound on the
/// optimum: a pruned branch may hold a labelling up to the tolerance above the best one), so `certified`
/// holds when the search ended within its budget. The marginals returned are the first relaxation's; when
/// `branches > 1` that relaxation may have stopped early, its bound stalled, to hand over to its branches.
pub(crate) fn ad3_branch(
    p: &Potentials,
    edges: &[[u32; 2]],
    s: Ad3Settings,
    branches: usize,
) -> Ad3Result {
    ad3_branch_from(p, edges, s, branches, None)
}

/// [`ad3_branch`], starting from TRW-S's answer when given: the multipliers from its messages (the marginals
/// uniform: starting them at TRW-S's labelling took ADMM twice as long on the graph bench's grid), its
/// labelling as the incumbent, and its bound where it is below the first relaxation's.
pub(crate) fn ad3_branch_from(
    p: &Potentials,
    edges: &[[u32; 2]],
    s: Ad3Settings,
    branches: usize,
    start: Option<&TrwsResult>,
) -> Ad3Result {
    let (n, l) = (p.n_nodes(), p.n_labels);
    let problem = Problem::new(p, edges, s);
    let mut allowed = vec![true; n * l];
    let (mut state, incumbent) = match start {
        Some(t) => (
            Admm::from_messages(&problem, &t.messages, &allowed),
            t.value,
        ),
        None => (Admm::new(&problem, &allowed), f64::NEG_INFINITY),
    };
    let mut root = problem.relax(&allowed, &mut state, incumbent, branches > 1);
    if let Some(t) = start {
        // TRW-S's labelling when it is the better one, and its bound when it is the lower one: both bound
        // the same optimum.
        if t.value > root.value {
            root.labels.clone_from(&t.labels);
            root.value = t.value;
        }
        root.bound = root.bound.min(t.bound);
        let found = root
            .fractional
            .as_ref()
            .map_or(root.value, |f| f.value.max(root.value));
        root.certified = root.bound - found <= s.certify.slack(root.bound);
    }
    if root.certified || branches <= 1 {
        return root;
    }
    let mut best = (root.labels.clone(), root.value);
    // Open branches: their constraints, their bound (an upper bound on what they hold) and their state.
    let mut open: Vec<(Vec<bool>, f64, Admm)> = Vec::new();
    let mut solved = 1;
    let mut pending = Some((allowed.clone(), root.bound, state));
    let mut unresolved = f64::NEG_INFINITY;
    // The largest bound of the branches closed (certified or pruned).
    let mut closed = f64::NEG_INFINITY;
    while let Some((mask, parent_bound, parent)) = pending.take().or_else(|| open.pop()) {
        // The most fractional node still free to take more than one label.
        let pick = (0..n)
            .filter(|&i| mask[i * l..(i + 1) * l].iter().filter(|&&a| a).count() > 1)
            .map(|i| (i, argmax(&parent.marg[i * l..(i + 1) * l])))
            .min_by(|x, y| x.1.1.total_cmp(&y.1.1).then(x.0.cmp(&y.0)));
        let Some((i, (label, _))) = pick else {
            continue;
        };
        for fix in [true, false] {
            allowed.copy_from_slice(&mask);
            for a in 0..l {
                let keep = if fix { a == label } else { a != label };
                allowed[i * l + a] &= keep;
            }
            if solved >= branches {
                // Out of budget: this branch stays open, bounded by its parent's bound.
                unresolved = unresolved.max(parent_bound);
                continue;
            }
            solved += 1;
            let mut child = parent.clone();
            child.restrict(&problem, &allowed);
            let r = problem.relax(&allowed, &mut child, best.1, true);
            if r.value > best.1 {
                best = (r.labels.clone(), r.value);
            }
            let tol = s.certify.slack(r.bound);
            if r.certified || r.bound <= best.1 + tol {
                closed = closed.max(r.bound);
                continue;
            }
            open.push((allowed.clone(), r.bound, child));
        }
        open.retain(|o| {
            let keep = o.1 > best.1 + s.certify.slack(o.1);
            if !keep {
                closed = closed.max(o.1);
            }
            keep
        });
    }
    let bound = open
        .iter()
        .map(|o| o.1)
        .fold(unresolved.max(closed), f64::max)
        .max(best.1);
    Ad3Result {
        certified: bound - best.1 <= s.certify.slack(bound),
        labels: best.0,
        value: best.1,
        bound: bound.min(root.bound),
        marginals: root.marginals,
        fractional: None,
    }
}
