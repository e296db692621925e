//! What a graph model scores on labelled graphs: node accuracy, Hamming loss and intersection over union,
//! each node counted by its weight in the loss (1 without `"node_weights"`).

use super::graph::labels_of;
use super::*;
use maxmargin_io::graphs::GraphData;

/// Per class `(truth ∧ prediction, truth ∨ prediction)` and the right and total weight of the nodes of
/// `predicted` against `truth`, each node counted by its weight (`weights[g]`, or 1 for a graph without).
fn weighted_counts(
    predicted: &[Vec<u32>],
    truth: &[Vec<u32>],
    weights: &[Option<&[f64]>],
    n_labels: usize,
) -> (Vec<(f64, f64)>, f64, f64) {
    let mut counts = vec![(0.0f64, 0.0f64); n_labels];
    let (mut right, mut total) = (0.0f64, 0.0f64);
    for ((p, y), v) in predicted.iter().zip(truth).zip(weights) {
        for (i, (&a, &b)) in p.iter().zip(y).enumerate() {
            let v = v.map_or(1.0, |v| v[i]);
            total += v;
            counts[a as usize].1 += v;
            if a == b {
                right += v;
                counts[a as usize].0 += v;
            } else {
                counts[b as usize].1 += v;
            }
        }
    }
    (counts, right, total)
}

impl GraphModel {
    /// Node accuracy, Hamming loss (the fraction of wrong nodes), per-class intersection over union and its
    /// mean over the classes present in truth or prediction, and the objective with `lambda`. Where graphs
    /// have node weights, every measure counts a node by its weight (a node of weight 0 does not count).
    ///
    /// # Errors
    /// As [`GraphModel::predict`]; a graph without labels or with a label beyond the model's; graphs whose
    /// node weights are all 0.
    pub fn evaluate(
        &self,
        data: &GraphData,
        lambda: Option<f64>,
    ) -> Result<StructEvaluation, Error> {
        let n = super::model::nonempty(data.n_graphs(), &data.source)?;
        let graphs = self.graphs(data)?;
        let mut labels = Vec::with_capacity(n);
        for (g, rec) in graphs.iter().zip(&data.graphs) {
            let y = labels_of(&data.source, rec)?;
            self.space
                .check_output(g, y)
                .map_err(|e| super::graph::at_line(&data.source, rec, "labels", e.to_string()))?;
            labels.push(y.clone());
        }
        let before = self.space.uncertified_calls();
        let predicted = self.decode_all(&graphs, data)?;
        let uncertified = self.space.uncertified_calls().saturating_sub(before);
        let l = self.space.n_labels();
        let weights: Vec<Option<&[f64]>> = graphs.iter().map(|g| g.node_weights()).collect();
        let (counts, right, total) = weighted_counts(&predicted, &labels, &weights, l);
        if total <= 0.0 {
            return Err(IoError::Parse {
                path: data.source.clone(),
                line: data.graphs[0].line,
                column: 1,
                field: "node_weights",
                message: "every node of every graph weighs 0: there is nothing to evaluate".into(),
            }
            .into());
        }
        let iou: Vec<Option<f64>> = counts
            .iter()
            .map(|&(i, u)| (u > 0.0).then(|| i / u))
            .collect();
        let present: Vec<f64> = iou.iter().flatten().copied().collect();
        let accuracy = right / total;
        let objective = match lambda {
            Some(lv) => {
                let problem = StructProblem::new(&self.space, &graphs, &labels, Lambda::new(lv)?)?;
                Some(0.5 * lv * norm_sq(&self.model.w) + problem.mean_hinge(&self.model.w)?)
            }
            None => None,
        };
        Ok(StructEvaluation {
            n,
            accuracy: Some(accuracy),
            hamming_loss: Some(1.0 - accuracy),
            per_class_iou: Some(iou),
            mean_iou: Some(present.iter().sum::<f64>() / present.len().max(1) as f64),
            lambda,
            objective,
            converged: self.model.training.converged,
            inference: Some(self.space.inference().name().to_string()),
            uncertified: Some(uncertified),
            ..StructEvaluation::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::weighted_counts;

    #[test]
    fn nodes_count_by_their_weights() {
        let predicted = vec![vec![0, 1, 1], vec![2]];
        let truth = vec![vec![0, 0, 1], vec![1]];
        let unweighted = weighted_counts(&predicted, &truth, &[None, None], 3);
        assert_eq!((unweighted.1, unweighted.2), (2.0, 4.0));
        // Class 1: right at node 2; wrong at node 1 (predicted) and in graph 1 (truth).
        assert_eq!(unweighted.0[1], (1.0, 3.0));
        let v = [0.0, 0.0, 2.0];
        let weighted = weighted_counts(&predicted, &truth, &[Some(&v), None], 3);
        // Nodes 0 and 1 weigh nothing; node 2 (right) weighs 2, graph 1's node (wrong) 1.
        assert_eq!((weighted.1, weighted.2), (2.0, 3.0));
        assert_eq!(weighted.0[1], (2.0, 3.0));
        assert_eq!(weighted.0[0], (0.0, 0.0));
    }
}
