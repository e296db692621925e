//! Graphs as JSON lines, one graph per line:
//! `{"features": [[f, ...], ...], "edges": [[i, j], ...], "labels": [l, ...]}`.
//!
//! Node features are dense (`"features"`, one row per node, every row of every graph of one length) or
//! sparse (`"features_sparse"`: per node a list of `[index, value]` pairs, 0-based indices); `"edges"` joins
//! 0-based node positions; `"edge_features"` (optional) gives one dense row per edge; `"labels"` (0-based,
//! one per node) is optional where a file is only predicted; `"node_weights"` (optional, one finite number
//! ≥ 0 per node) weighs each node's term of the training and evaluation loss (0 leaves an unlabelled node
//! out of it). Blank lines and lines starting with `#` are
//! skipped; `.gz` is read transparently. Every error names the file, line and field. Nothing is allocated
//! from a number in the file: sizes come from the lists actually read.

use crate::{IoError, Lines};
use maxmargin_core::vector::SparseVec;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One graph as read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphRecord {
    /// One sparse feature vector per node (0-based indices).
    pub nodes: Vec<SparseVec>,
    /// Edges between 0-based node positions, as written.
    pub edges: Vec<[u32; 2]>,
    /// One dense feature row per edge, when the line has `"edge_features"`.
    pub edge_features: Option<Vec<Vec<f64>>>,
    /// One 0-based label per node, when the line has `"labels"`.
    pub labels: Option<Vec<u32>>,
    /// One weight of the loss per node, when the line has `"node_weights"`.
    pub node_weights: Option<Vec<f64>>,
    /// The 1-based line it was read from.
    pub line: usize,
}

/// The graphs of a file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphData {
    /// The graphs, in file order.
    pub graphs: Vec<GraphRecord>,
    /// One past the largest node feature index (the row length for dense features).
    pub n_features: usize,
    /// Features per edge (0 when no line has edge features).
    pub n_edge_features: usize,
    /// One past the largest label.
    pub n_labels: usize,
    /// The length of the dense `"features"` rows, and the line that fixed it (`None` where every line gives
    /// `"features_sparse"`): shares of one file read apart (over ranks) must agree on it.
    pub dense_width: Option<(usize, usize)>,
    /// The file.
    pub source: PathBuf,
}

impl GraphData {
    /// Number of graphs.
    pub fn n_graphs(&self) -> usize {
        self.graphs.len()
    }

    /// Number of nodes over all graphs.
    pub fn n_nodes(&self) -> usize {
        self.graphs.iter().map(|g| g.nodes.len()).sum()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    features: Option<Vec<Vec<f64>>>,
    features_sparse: Option<Vec<Vec<(u32, f64)>>>,
    edges: Vec<[u32; 2]>,
    edge_features: Option<Vec<Vec<f64>>>,
    labels: Option<Vec<u32>>,
    node_weights: Option<Vec<f64>>,
}

/// Reads a graph file (`-` for standard input is not special here: use a path).
///
/// # Errors
/// [`IoError::Parse`] naming the line and field for JSON that does not parse, an unknown key, both or
/// neither of `features` and `features_sparse`, rows of another length, unsorted or repeated sparse
/// indices, non-finite values, labels or node weights not one per node, a negative node weight, edge features not one row per edge or of another
/// length; [`IoError::Empty`] for a file without graphs; [`IoError::Io`].
///
/// # Examples
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let p = dir.path().join("g.jsonl");
/// std::fs::write(&p, r#"{"features": [[1, 0], [0, 1]], "edges": [[0, 1]], "labels": [0, 1]}"#)?;
/// let d = maxmargin_io::graphs::read(&p)?;
/// assert_eq!((d.n_graphs(), d.n_features, d.n_labels), (1, 2, 2));
/// assert_eq!(d.graphs[0].edges, vec![[0, 1]]);
/// # Ok(()) }
/// ```
pub fn read(path: &Path) -> Result<GraphData, IoError> {
    crate::cache::refuse(path)?;
    read_from(crate::open_maybe_gz(path)?, path)
}

/// Reads graphs from any buffered reader; `path` names the source in errors.
///
/// # Errors
/// As [`read`].
pub fn read_from(reader: impl std::io::BufRead, path: &Path) -> Result<GraphData, IoError> {
    read_from_after(reader, path, 0)
}

/// As [`read_from`], for a reader that starts after the first `before` lines of the file `path` (a rank's
/// share): every line number, in errors and records, is the file's.
///
/// # Errors
/// As [`read`].
pub fn read_from_after(
    reader: impl std::io::BufRead,
    path: &Path,
    before: usize,
) -> Result<GraphData, IoError> {
    let mut lines = Lines::new(reader, path).after(before);
    let mut out = GraphData {
        source: path.to_path_buf(),
        ..GraphData::default()
    };
    // The dense row length and edge feature count, fixed by the first line that has them.
    let mut dense_width: Option<(usize, usize)> = None;
    let mut edge_width: Option<(usize, usize)> = None;
    while let Some((n, text)) = lines.next_line()? {
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let bad = |field: &'static str, message: String| IoError::Parse {
            path: path.to_path_buf(),
            line: n,
            column: 1,
            field,
            message,
        };
        let raw: Line = serde_json::from_str(text).map_err(|e| IoError::Parse {
            path: path.to_path_buf(),
            line: n,
            column: e.column().max(1),
            field: "json",
            message: format!(
                "{e} (a graph line is an object with \"features\" or \"features_sparse\", \"edges\", and \
                 optionally \"edge_features\", \"labels\" and \"node_weights\")"
            ),
        })?;
        let nodes = match (raw.features, raw.features_sparse) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "features",
                    "both \"features\" and \"features_sparse\": give one".into(),
                ));
            }
            (None, None) => {
                return Err(bad(
                    "features",
                    "neither \"features\" nor \"features_sparse\": every graph needs node features"
                        .into(),
                ));
            }
            (Some(rows), None) => {
                let mut nodes = Vec::with_capacity(rows.len());
                for (i, row) in rows.iter().enumerate() {
                    let (first, width) = *dense_width.get_or_insert((n, row.len()));
                    if row.len() != width {
                        return Err(bad(
                            "features",
                            format!(
                                "node {i} has {} features where line {first} has {width}",
                                row.len()
                            ),
                        ));
                    }
                    if let Some(p) = row.iter().position(|v| !v.is_finite()) {
                        return Err(bad(
                            "features",
                            format!("node {i}, feature {p}: not finite"),
                        ));
                    }
                    nodes.push(
                        SparseVec::from_dense(row)
                            .map_err(|e| bad("features", format!("node {i}: {e}")))?,
                    );
                }
                out.n_features = out.n_features.max(dense_width.map_or(0, |w| w.1));
                nodes
            }
            (None, Some(rows)) => {
                let mut nodes = Vec::with_capacity(rows.len());
                for (i, pairs) in rows.into_iter().enumerate() {
                    if let Some(w) = pairs.windows(2).find(|w| w[0].0 >= w[1].0) {
                        return Err(bad(
                            "features_sparse",
                            format!(
                                "node {i}: index {} after {}: indices must increase",
                                w[1].0, w[0].0
                            ),
                        ));
                    }
                    if let Some((j, v)) = pairs.iter().find(|p| !p.1.is_finite()) {
                        return Err(bad(
                            "features_sparse",
                            format!("node {i}, index {j}: {v} is not finite"),
                        ));
                    }
                    if let Some(&(j, _)) = pairs.last() {
                        out.n_features = out.n_features.max(j as usize + 1);
                    }
                    let (idx, val): (Vec<u32>, Vec<f64>) =
                        pairs.into_iter().filter(|p| p.1 != 0.0).unzip();
                    nodes.push(
                        SparseVec::new(idx, val)
                            .map_err(|e| bad("features_sparse", format!("node {i}: {e}")))?,
                    );
                }
                nodes
            }
        };
        if nodes.is_empty() {
            return Err(bad("features", "a graph needs at least one node".into()));
        }
        if let Some(labels) = &raw.labels {
            if labels.len() != nodes.len() {
                return Err(bad(
                    "labels",
                    format!("{} labels for {} nodes", labels.len(), nodes.len()),
                ));
            }
            if let Some(&m) = labels.iter().max() {
                out.n_labels = out.n_labels.max(m as usize + 1);
            }
        }
        if let Some(v) = &raw.node_weights {
            if v.len() != nodes.len() {
                return Err(bad(
                    "node_weights",
                    format!("{} weights for {} nodes", v.len(), nodes.len()),
                ));
            }
            if let Some(i) = v.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(bad(
                    "node_weights",
                    format!("node {i}: {} is not a finite number ≥ 0", v[i]),
                ));
            }
        }
        if let Some(rows) = &raw.edge_features {
            if rows.len() != raw.edges.len() {
                return Err(bad(
                    "edge_features",
                    format!("{} rows for {} edges", rows.len(), raw.edges.len()),
                ));
            }
            for (e, row) in rows.iter().enumerate() {
                let (first, width) = *edge_width.get_or_insert((n, row.len()));
                if row.len() != width || width == 0 {
                    return Err(bad(
                        "edge_features",
                        format!(
                            "edge {e} has {} features where line {first} has {width} (at least one)",
                            row.len()
                        ),
                    ));
                }
                if let Some(p) = row.iter().position(|v| !v.is_finite()) {
                    return Err(bad(
                        "edge_features",
                        format!("edge {e}, feature {p}: not finite"),
                    ));
                }
            }
        }
        out.graphs.push(GraphRecord {
            nodes,
            edges: raw.edges,
            edge_features: raw.edge_features,
            labels: raw.labels,
            node_weights: raw.node_weights,
            line: n,
        });
    }
    if out.graphs.is_empty() {
        return Err(IoError::Empty {
            path: path.to_path_buf(),
        });
    }
    // A file where some graphs have edge features and others (with edges) have none cannot be one model.
    if let Some((first, width)) = edge_width
        && let Some(g) = out
            .graphs
            .iter()
            .find(|g| g.edge_features.is_none() && !g.edges.is_empty())
    {
        return Err(IoError::Parse {
            path: path.to_path_buf(),
            line: g.line,
            column: 1,
            field: "edge_features",
            message: format!("missing, where line {first} gives {width} per edge"),
        });
    }
    out.n_edge_features = edge_width.map_or(0, |w| w.1);
    out.dense_width = dense_width;
    Ok(out)
}

/// Writes graphs as JSON lines, atomically: dense `"features"` when there are at most 64 node features,
/// else `"features_sparse"`; `"edge_features"`, `"labels"` and `"node_weights"` where the graph has them. [`read`] gives the
/// same graphs back.
///
/// # Errors
/// [`IoError::Io`] naming `path`.
pub fn write(path: &Path, data: &GraphData) -> Result<(), IoError> {
    let dense = data.n_features <= 64;
    crate::atomic::write_atomic(path, |w| {
        for g in &data.graphs {
            let mut line = serde_json::Map::new();
            if dense {
                let rows: Vec<Vec<f64>> = g
                    .nodes
                    .iter()
                    .map(|v| v.as_row().to_dense(data.n_features))
                    .collect();
                line.insert("features".into(), serde_json::json!(rows));
            } else {
                let rows: Vec<Vec<(usize, f64)>> = g
                    .nodes
                    .iter()
                    .map(|v| v.as_row().iter().collect())
                    .collect();
                line.insert("features_sparse".into(), serde_json::json!(rows));
            }
            line.insert("edges".into(), serde_json::json!(g.edges));
            if let Some(f) = &g.edge_features {
                line.insert("edge_features".into(), serde_json::json!(f));
            }
            if let Some(y) = &g.labels {
                line.insert("labels".into(), serde_json::json!(y));
            }
            if let Some(v) = &g.node_weights {
                line.insert("node_weights".into(), serde_json::json!(v));
            }
            serde_json::to_writer(&mut *w, &line)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<GraphData, IoError> {
        read_from(text.as_bytes(), Path::new("g.jsonl"))
    }

    #[test]
    fn dense_sparse_and_edge_features_are_read() -> Result<(), IoError> {
        let d = parse(
            "# a comment\n{\"features_sparse\": [[[0, 1.5]], [[3, -1]]], \"edges\": [[1, 0]], \
             \"edge_features\": [[1, 2]], \"labels\": [2, 0]}\n\n\
             {\"features_sparse\": [[]], \"edges\": []}\n",
        )?;
        assert_eq!((d.n_graphs(), d.n_nodes()), (2, 3));
        assert_eq!((d.n_features, d.n_edge_features, d.n_labels), (4, 2, 3));
        assert_eq!(d.graphs[0].line, 2);
        assert_eq!(d.graphs[1].labels, None);
        Ok(())
    }

    #[test]
    fn what_is_written_reads_back() -> Result<(), IoError> {
        let d = parse(
            "{\"features_sparse\": [[[0, 1.5]], [[3, -1]]], \"edges\": [[1, 0]], \
             \"edge_features\": [[1, 2]], \"labels\": [2, 0], \"node_weights\": [0.5, 0]}\n",
        )?;
        let dir = tempfile::tempdir().map_err(|e| IoError::io(Path::new("tmp"), e))?;
        let p = dir.path().join("g.jsonl");
        write(&p, &d)?;
        let back = read(&p)?;
        assert_eq!(
            (back.graphs[0].nodes.clone(), back.n_features),
            (d.graphs[0].nodes.clone(), 4)
        );
        assert_eq!(
            (back.graphs[0].edges.clone(), back.graphs[0].labels.clone()),
            (vec![[1, 0]], Some(vec![2, 0]))
        );
        assert_eq!(back.graphs[0].node_weights, Some(vec![0.5, 0.0]));
        Ok(())
    }

    #[test]
    fn mistakes_name_the_line_and_field() {
        let cases = [
            (
                "{\"features\": [[1]], \"edges\": [], \"labels\": [0], \"wat\": 1}",
                "json",
                "unknown field",
            ),
            (
                "{\"features\": [[1]], \"features_sparse\": [[]], \"edges\": []}",
                "features",
                "both",
            ),
            ("{\"edges\": []}", "features", "neither"),
            (
                "{\"features\": [[1], [1, 2]], \"edges\": []}",
                "features",
                "node 1 has 2",
            ),
            (
                "{\"features\": [[1]], \"edges\": [], \"labels\": [0, 1]}",
                "labels",
                "2 labels for 1",
            ),
            (
                "{\"features\": [], \"edges\": []}",
                "features",
                "at least one node",
            ),
            (
                "{\"features\": [[1]], \"edges\": [], \"node_weights\": [1, 2]}",
                "node_weights",
                "2 weights for 1 nodes",
            ),
            (
                "{\"features\": [[1], [1]], \"edges\": [], \"node_weights\": [1, -0.5]}",
                "node_weights",
                "node 1: -0.5 is not a finite number ≥ 0",
            ),
            (
                "{\"features_sparse\": [[[3, 1], [1, 1]]], \"edges\": []}",
                "features_sparse",
                "increase",
            ),
            (
                "{\"features\": [[1], [2]], \"edges\": [[0, 1]], \"edge_features\": []}",
                "edge_features",
                "0 rows for 1",
            ),
            (
                "{\"features\": [[1]], \"edges\": [], \"labels\": [-1]}",
                "json",
                "invalid value",
            ),
            ("{\"features\": [[1e999]], \"edges\": []}", "json", ""),
            (
                "{\"features\": [[1]], \"edges\": [[0, 4294967296]]}",
                "json",
                "",
            ),
        ];
        for (text, field, says) in cases {
            let input = format!("\n{text}\n");
            match parse(&input) {
                Err(IoError::Parse {
                    line,
                    field: f,
                    message,
                    ..
                }) => {
                    assert_eq!((line, f), (2, field), "{text}: {message}");
                    assert!(message.contains(says), "{text}: {message}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(matches!(parse("\n# only\n"), Err(IoError::Empty { .. })));
        let mixed = "{\"features\": [[1], [2]], \"edges\": [[0, 1]], \"edge_features\": [[1]]}\n\
                     {\"features\": [[1], [2]], \"edges\": [[0, 1]]}\n";
        assert!(matches!(parse(mixed), Err(IoError::Parse { line: 2, .. })));
    }
}
