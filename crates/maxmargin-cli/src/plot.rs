//! Pictures: training curves from trace files (`plot`), the soft-margin figure of a two-feature binary model
//! (`plot-boundary`), and the demo's figures. Drawn as SVG by plotters; a path ending in `.png` gets that
//! SVG rendered by resvg with the system's fonts.

use anyhow::{Context, Result, bail};
use maxmargin::io::atomic::write_atomic;
use plotters::prelude::*;
use std::path::Path;

/// One named curve.
pub struct Series {
    /// The legend's name.
    pub name: String,
    /// `(x, y)` points, in order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart: curves, horizontal guide lines (a tolerance), axes and their scales.
pub struct LineChart<'a> {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: &'a [Series],
    /// `(y, legend)` horizontal lines.
    pub guides: &'a [(f64, String)],
}

const SIZE: (u32, u32) = (860, 520);

type Drawn = std::result::Result<(), Box<dyn std::error::Error>>;

/// The smallest and largest of some values, widened when they are equal (or span nothing usable).
fn span(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if log {
        // Values are log10 already: whole decades around them.
        let (a, b) = (lo.floor(), hi.ceil());
        (a, if b > a { b } else { a + 1.0 })
    } else {
        let pad = ((hi - lo) * 0.05).max(hi.abs().max(1.0) * 1e-3);
        (lo - pad, hi + pad)
    }
}

/// An axis value as printed: plain for ordinary magnitudes, `1e-3` style beyond them.
fn tick(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-2 || v.abs() >= 1e4) {
        format!("{v:.0e}")
    } else {
        format!("{}", (v * 1e4).round() / 1e4)
    }
}

impl LineChart<'_> {
    /// Writes the chart to `path` (SVG, or PNG for a `.png` path). A log axis is drawn as log10 of the values
    /// on a linear axis with a label at each whole decade (plotters' own log axes leave most decades bare).
    ///
    /// # Errors
    /// When nothing can be drawn or the file cannot be written.
    pub fn write(&self, path: &Path) -> Result<()> {
        let map = |v: f64, log: bool| if log { v.log10() } else { v };
        let keep = |p: &(f64, f64)| {
            p.0.is_finite()
                && p.1.is_finite()
                && (!self.log_x || p.0 > 0.0)
                && (!self.log_y || p.1 > 0.0)
        };
        let series: Vec<Series> = self
            .series
            .iter()
            .map(|s| Series {
                name: s.name.clone(),
                points: s
                    .points
                    .iter()
                    .filter(|p| keep(p))
                    .map(|p| (map(p.0, self.log_x), map(p.1, self.log_y)))
                    .collect(),
            })
            .collect();
        let guides: Vec<(f64, &str)> = self
            .guides
            .iter()
            .filter(|g| !self.log_y || g.0 > 0.0)
            .map(|g| (map(g.0, self.log_y), g.1.as_str()))
            .collect();
        // A log axis takes values above 0 only: a curve that loses every point is said so and left out of
        // the legend (it was dropped silently, its legend entry kept); with none left, the error says why.
        let why = match (self.log_x, self.log_y) {
            (false, false) => "values must be finite",
            (true, false) => "values must be finite, and the log x axis takes x above 0 only",
            (false, true) => "values must be finite, and the log y axis takes y above 0 only",
            (true, true) => "values must be finite, and the log axes take values above 0 only",
        };
        if series.iter().all(|s| s.points.is_empty()) {
            let names: Vec<&str> = self.series.iter().map(|s| s.name.as_str()).collect();
            bail!(
                "nothing to draw: no point of {} can be drawn ({why})",
                names.join(", ")
            );
        }
        for (given, drawn) in self.series.iter().zip(&series) {
            if !given.points.is_empty() && drawn.points.is_empty() {
                note!(
                    "warning: {}: none of its {} points can be drawn ({why}); it is left out",
                    given.name,
                    given.points.len()
                );
            }
        }
        let mut series = series;
        series.retain(|s| !s.points.is_empty());
        let all = || series.iter().flat_map(|s| s.points.iter());
        let x = span(all().map(|p| p.0), self.log_x);
        let y = span(
            all().map(|p| p.1).chain(guides.iter().map(|g| g.0)),
            self.log_y,
        );
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            self.draw(&root, (x, y), &series, &guides)
                .and_then(|()| Ok(root.present()?))
                .map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))?;
        }
        save(path, &svg)
    }

    fn draw(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        (x, y): ((f64, f64), (f64, f64)),
        series: &[Series],
        guides: &[(f64, &str)],
    ) -> Drawn {
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d(x.0..x.1, y.0..y.1)?;
        let (log_x, log_y) = (self.log_x, self.log_y);
        let x_fmt = move |v: &f64| {
            if log_x {
                tick(10f64.powf(*v))
            } else {
                tick(*v)
            }
        };
        let y_fmt = move |v: &f64| {
            if log_y {
                tick(10f64.powf(*v))
            } else {
                tick(*v)
            }
        };
        // On a log axis, one label per whole decade (when there are at most a dozen).
        let decades = |r: (f64, f64), log: bool, default: usize| {
            let n = (r.1 - r.0).round() as usize + 1;
            if log && n <= 13 { n } else { default }
        };
        chart
            .configure_mesh()
            .x_desc(self.x_desc.as_str())
            .y_desc(self.y_desc.as_str())
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_labels(decades(x, log_x, 10))
            .y_labels(decades(y, log_y, 10))
            .light_line_style(BLACK.mix(0.05))
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    color.stroke_width(2),
                ))?
                .label(s.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            if s.points.len() == 1 {
                // A lone point draws no line: mark it.
                chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 6, color.filled())))?;
            }
        }
        for &(v, name) in guides {
            let style = BLACK.mix(0.5).stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new([(x.0, v), (x.1, v)], 6, 4, style))?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()?;
        Ok(())
    }
}

/// Writes SVG text to `path`, or renders it to PNG when the path ends in `.png`; atomically either way.
pub fn save(path: &Path, svg: &str) -> Result<()> {
    let png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !png {
        write_atomic(path, |w| w.write_all(svg.as_bytes()))?;
        return Ok(());
    }
    let mut options = resvg::usvg::Options::default();
    let db = options.fontdb_mut();
    db.load_system_fonts();
    // plotters asks for "sans-serif"; name an installed family for it when the default one is missing.
    let sans = db
        .faces()
        .find(|f| f.families.iter().any(|(n, _)| n.contains("Sans")))
        .or_else(|| db.faces().next())
        .and_then(|f| f.families.first().map(|(n, _)| n.clone()));
    let has_fonts = sans.is_some();
    if let Some(family) = sans {
        db.set_sans_serif_family(family);
    }
    let tree = resvg::usvg::Tree::from_str(svg, &options).context("reading the drawn SVG back")?;
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .context("allocating the PNG's pixels")?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    let bytes = pixmap
        .encode_png()
        .map_err(|e| anyhow::anyhow!("encoding {}: {e}", path.display()))?;
    if !has_fonts {
        note!(
            "warning: no system fonts found: {} has no text (an .svg path keeps it)",
            path.display()
        );
    }
    write_atomic(path, |w| w.write_all(&bytes))?;
    Ok(())
}

/// The soft-margin figure: points by class, the boundary `f(x) = cut`, the margins `f(x) = ±1`, and the
/// points with `y·f(x) < 1` (margin violators) ringed.
pub struct BoundaryChart<'a> {
    pub title: String,
    /// `(x1, x2, positive)`.
    pub points: &'a [(f64, f64, bool)],
    /// `f(x) = a·x1 + b·x2 + c`.
    pub affine: (f64, f64, f64),
    /// The decision cut-off (0 for a plain model).
    pub cut: f64,
    /// The class names, negative then positive.
    pub names: [String; 2],
}

impl BoundaryChart<'_> {
    /// Writes the figure to `path` (SVG, or PNG for a `.png` path).
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&self, path: &Path) -> Result<()> {
        let x = span(self.points.iter().map(|p| p.0), false);
        let y = span(self.points.iter().map(|p| p.1), false);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (720, 640)).into_drawing_area();
            self.draw(&root, x, y)
                .and_then(|()| Ok(root.present()?))
                .map_err(|e| anyhow::anyhow!("drawing {}: {e}", path.display()))?;
        }
        save(path, &svg)
    }

    /// Where the line `f(x) = level` crosses the box, as two points (none when it misses it).
    fn segment(&self, level: f64, x: (f64, f64), y: (f64, f64)) -> Option<[(f64, f64); 2]> {
        let (a, b, c) = self.affine;
        let mut hits = Vec::new();
        if b != 0.0 {
            for xv in [x.0, x.1] {
                let yv = (level - c - a * xv) / b;
                if (y.0..=y.1).contains(&yv) {
                    hits.push((xv, yv));
                }
            }
        }
        if a != 0.0 {
            for yv in [y.0, y.1] {
                let xv = (level - c - b * yv) / a;
                if (x.0..=x.1).contains(&xv) {
                    hits.push((xv, yv));
                }
            }
        }
        hits.dedup_by(|p, q| (p.0 - q.0).abs() < 1e-12 && (p.1 - q.1).abs() < 1e-12);
        (hits.len() >= 2).then(|| [hits[0], hits[1]])
    }

    fn draw(
        &self,
        root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
        x: (f64, f64),
        y: (f64, f64),
    ) -> Drawn {
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 17))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(x.0..x.1, y.0..y.1)?;
        chart
            .configure_mesh()
            .x_desc("feature 1")
            .y_desc("feature 2")
            .light_line_style(BLACK.mix(0.05))
            .draw()?;
        let (a, b, c) = self.affine;
        let f = |p: &(f64, f64, bool)| a * p.0 + b * p.1 + c;
        let colors = [RGBColor(200, 60, 40), RGBColor(30, 90, 200)];
        for (k, name) in self.names.iter().enumerate() {
            let color = colors[k];
            let positive = k == 1;
            let pts = self.points.iter().filter(|p| p.2 == positive);
            if positive {
                chart
                    .draw_series(pts.map(|p| Circle::new((p.0, p.1), 4, color.filled())))?
                    .label(format!("class {name}"))
                    .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()));
            } else {
                chart
                    .draw_series(pts.map(|p| TriangleMarker::new((p.0, p.1), 5, color.filled())))?
                    .label(format!("class {name}"))
                    .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 5, color.filled()));
            }
        }
        let violators = self
            .points
            .iter()
            .filter(|p| (if p.2 { 1.0 } else { -1.0 }) * f(p) < 1.0);
        chart
            .draw_series(violators.map(|p| Circle::new((p.0, p.1), 9, BLACK.stroke_width(1))))?
            .label("inside the margin or misclassified (y·f(x) < 1)")
            .legend(|(x, y)| Circle::new((x + 10, y), 6, BLACK.stroke_width(1)));
        if let Some(seg) = self.segment(self.cut, x, y) {
            chart
                .draw_series(LineSeries::new(seg, BLACK.stroke_width(2)))?
                .label(if self.cut == 0.0 {
                    "boundary <w,x> + b = 0".to_string()
                } else {
                    format!("boundary <w,x> + b = {}", self.cut)
                })
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2))
                });
        }
        let dashed = BLACK.mix(0.6).stroke_width(1);
        let mut labelled = false;
        for level in [-1.0, 1.0] {
            if let Some(seg) = self.segment(level, x, y) {
                let s = chart.draw_series(DashedLineSeries::new(seg, 6, 4, dashed))?;
                if !labelled {
                    s.label("margins <w,x> + b = ±1")
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], dashed));
                    labelled = true;
                }
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .draw()?;
        Ok(())
    }
}
