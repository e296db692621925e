//! Feature templates for sequence labelling, in CRF++'s template language with a few extensions.
//!
//! A template file has one feature template per line; blank lines and lines starting with `#` are skipped.
//! A line starting with `U` is a unigram template: for every token `t` it yields one binary feature, the
//! line with each macro replaced by text from the sentence. Macros name a cell by its row offset from `t`
//! and its input column (0 is the word; the tag column is never an input):
//!
//! | macro | value |
//! |---|---|
//! | `%x[r,c]` | the cell as written (CRF++) |
//! | `%lower[r,c]` | the cell lowercased |
//! | `%shape[r,c]` | its [`shape`](super::shape): `X` upper, `x` lower, `d` digit, runs collapsed |
//! | `%prefixK[r,c]`, `%suffixK[r,c]` | the first or last K characters (1 ≤ K ≤ 16) of the lowercased cell; the template yields nothing for a shorter cell |
//! | `%v[r,c]` | a real-valued feature: the cell read as a number is the feature's value, and the name keeps `%v[r,c]` as written (one a line, unigram lines only; a zero or a row outside the sentence yields nothing) |
//!
//! With `%v`, a column of numbers (say word embeddings, `word POS e1 ... e50 tag`, one line `U:%v[0,c]` per
//! column) enters the model as values; [`Template::check_values`] names a cell that is not a finite number.
//!
//! Rows before the sentence read `<s>`, rows after it `</s>`. A line with no macro is a feature every token
//! has (a bias). A line `B` alone is accepted as in CRF++: the chain always scores tag transitions. A line
//! starting with `B` with macros is a bigram template, as in CRF++: an observation-dependent transition, whose
//! feature at token `t ≥ 1` scores the pair of tags `(y_{t−1}, y_t)` (one weight per feature and tag pair,
//! so keep these templates to small vocabularies such as POS tags, or prune them with a minimum count).
//! A line `T` alone asks for second-order transitions: a weight for every triple of tags
//! `(y_{t−2}, y_{t−1}, y_t)`, decoded in `O(T·L³)` per sentence (`L` tags) instead of `O(T·L²)`.
//!
//! Two templates are built in: [`Template::chunking`] (word and POS windows, CoNLL-2000) and
//! [`Template::ner`] (word windows, affixes and shapes, and every further input column around the token).

use super::{Sentence, shape};
use crate::IoError;
use std::fmt::Write as _;
use std::path::Path;

/// The widest row offset a macro may name.
pub const MAX_OFFSET: i32 = 64;
/// The largest template file read (1 MiB; the built-in templates are under 2 KiB).
pub const MAX_TEMPLATE_BYTES: u64 = 1 << 20;
/// Macros one template line may hold (a line of 200,000 macros took 7.2 GB of feature strings).
pub const MAX_MACROS_PER_TEMPLATE: usize = 16;
/// Template lines (unigram and bigram) one file may hold.
pub const MAX_TEMPLATES: usize = 4096;
/// The longest prefix or suffix a macro may take.
pub const MAX_AFFIX: usize = 16;

/// How a macro maps its cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CellMap {
    Value,
    Same,
    Lower,
    Shape,
    Prefix(usize),
    Suffix(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Cell { row: i32, col: usize, map: CellMap },
}

/// A parsed template: its name (`chunking`, `ner`, or the file it came from), its text and its patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    name: String,
    text: String,
    patterns: Vec<Vec<Part>>,
    edges: Vec<Vec<Part>>,
    columns: usize,
    second_order: bool,
}

impl Template {
    /// The chunker templates (CoNLL-2000): a bias; word, lowercase, shape and POS at offsets −2..2; prefixes
    /// and suffixes of 1–4 characters; the POS bigrams around the token. Needs two input columns (word, POS).
    pub fn chunking() -> Self {
        let mut text = String::from(
            "# Chunking: input column 0 is the word, column 1 its part-of-speech tag.\nUb\n",
        );
        word_features(&mut text, true);
        text.push_str("Upp-1:%x[-1,1]|%x[0,1]\nUpp+1:%x[0,1]|%x[1,1]\nB\n");
        Self::builtin("chunking", text)
    }

    /// Named-entity templates for a file with `inputs` input columns (CoNLL-2003: word, POS, chunk; CoNLL-2002:
    /// the word, and POS in the Dutch files): the chunking word features, and every further column at offsets
    /// −1..1 with its bigram with the token's.
    pub fn ner(inputs: usize) -> Self {
        let mut text = String::from(
            "# Named entities: input column 0 is the word; any others (POS, chunk) follow.\nUb\n",
        );
        word_features(&mut text, false);
        text.push_str("Uws:%lower[0,0]|%shape[1,0]\nUsw:%shape[-1,0]|%lower[0,0]\n");
        for c in 1..inputs {
            for o in -1i32..=1 {
                let _ = writeln!(text, "Uc{c}.{o}:%x[{o},{c}]");
            }
            let _ = writeln!(text, "Uc{c}b:%x[-1,{c}]|%x[0,{c}]");
        }
        text.push_str("B\n");
        Self::builtin("ner", text)
    }

    fn builtin(name: &str, text: String) -> Self {
        match Self::parse(name, &text) {
            Ok(t) => t,
            // The built-in texts parse; a failure here is a bug in this file, shown by the tests.
            Err(e) => Self {
                name: format!("{name} (unparsable: line {}: {})", e.0, e.2),
                text,
                patterns: Vec::new(),
                edges: Vec::new(),
                columns: 0,
                second_order: false,
            },
        }
    }

    /// Reads a template file.
    ///
    /// # Errors
    /// [`IoError::Io`] for an unreadable file, [`IoError::Parse`] naming the line and column of a bad macro.
    pub fn read(path: &Path) -> Result<Self, IoError> {
        let file = std::fs::File::open(path).map_err(|e| IoError::io(path, e))?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, MAX_TEMPLATE_BYTES + 1),
            &mut bytes,
        )
        .map_err(|e| IoError::io(path, e))?;
        if bytes.len() as u64 > MAX_TEMPLATE_BYTES {
            return Err(IoError::Parse {
                path: path.to_path_buf(),
                line: 1,
                column: 1,
                field: "template",
                message: format!(
                    "longer than {} KiB; a template file holds at most {MAX_TEMPLATES} lines",
                    MAX_TEMPLATE_BYTES >> 10
                ),
            });
        }
        let body = bytes.strip_prefix(crate::lines::BOM).unwrap_or(&bytes);
        let text = std::str::from_utf8(body).map_err(|e| IoError::Parse {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            field: "template",
            message: format!("not UTF-8 text ({e})"),
        })?;
        Self::parse(&path.display().to_string(), text).map_err(|(line, column, message)| {
            IoError::Parse {
                path: path.to_path_buf(),
                line,
                column,
                field: "template",
                message,
            }
        })
    }

    /// Parses template text; `name` is kept with it (models record which templates made their features).
    ///
    /// # Errors
    /// `(line, column, message)` of the first bad line.
    ///
    /// # Examples
    /// ```
    /// use maxmargin_io::conll::Template;
    /// let t = Template::parse("mine", "# words\nU00:%x[0,0]\nU01:%x[-1,0]/%x[0,0]\nB\nB01:%x[0,1]\n")
    ///     .map_err(|(line, col, m)| format!("{line}:{col}: {m}"))?;
    /// assert_eq!((t.len(), t.edge_len(), t.columns()), (2, 1, 2));
    /// assert!(Template::parse("bad", "U00:%x[0]\n").is_err());
    /// # Ok::<(), String>(())
    /// ```
    pub fn parse(name: &str, text: &str) -> Result<Self, (usize, usize, String)> {
        let mut patterns = Vec::new();
        let mut edges = Vec::new();
        let mut columns = 0;
        let mut second_order = false;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let at =
                |col: usize, m: String| (i + 1, col + 1 + (raw.len() - raw.trim_start().len()), m);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with('T') {
                if line != "T" {
                    return Err(at(
                        0,
                        "a T line (second-order transitions) stands alone: tag triples over \
                         observations are not modelled"
                            .into(),
                    ));
                }
                second_order = true;
                continue;
            }
            let parts = parse_line(line).map_err(|(c, m)| at(c, m))?;
            let bigram = line.starts_with('B');
            if bigram && !parts.iter().any(|p| matches!(p, Part::Cell { .. })) {
                // `B` alone: the tag transitions, which the chain always scores.
                continue;
            }
            let values = parts
                .iter()
                .filter(|p| {
                    matches!(
                        p,
                        Part::Cell {
                            map: CellMap::Value,
                            ..
                        }
                    )
                })
                .count();
            if values > 1 || (bigram && values > 0) {
                return Err(at(
                    0,
                    "a %v macro (a real-valued feature) stands once on a unigram (U) line".into(),
                ));
            }
            if !bigram && !line.starts_with('U') {
                return Err(at(
                    0,
                    "a template line starts with U (unigram), B (bigram), T (tag triples), or # (a comment)"
                        .into(),
                ));
            }
            let macros = parts
                .iter()
                .filter(|p| matches!(p, Part::Cell { .. }))
                .count();
            if macros > MAX_MACROS_PER_TEMPLATE {
                return Err(at(
                    0,
                    format!(
                        "{macros} macros on one template line; at most {MAX_MACROS_PER_TEMPLATE}"
                    ),
                ));
            }
            if patterns.len() + edges.len() == MAX_TEMPLATES {
                return Err(at(0, format!("more than {MAX_TEMPLATES} template lines")));
            }
            for p in &parts {
                if let Part::Cell { col, .. } = p {
                    columns = columns.max(col + 1);
                }
            }
            if bigram {
                edges.push(parts);
            } else {
                patterns.push(parts);
            }
        }
        if patterns.is_empty() {
            return Err((1, 1, "no unigram (U) template line".into()));
        }
        Ok(Self {
            name: name.into(),
            text: text.into(),
            patterns,
            edges,
            columns,
            second_order,
        })
    }

    /// Whether a `T` line asks for second-order transitions (a weight for every triple of tags).
    pub fn second_order(&self) -> bool {
        self.second_order
    }

    /// The same template with second-order transitions: a `T` line added to its text when it has none.
    #[must_use]
    pub fn with_second_order(mut self) -> Self {
        if !self.second_order {
            if !self.text.is_empty() && !self.text.ends_with('\n') {
                self.text.push('\n');
            }
            self.text.push_str("T\n");
            self.second_order = true;
        }
        self
    }

    /// The template's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The template text (what [`parse`](Self::parse) reads back).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Number of unigram templates.
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// Number of bigram templates with macros (observation-dependent transitions).
    pub fn edge_len(&self) -> usize {
        self.edges.len()
    }

    /// Whether there are no templates (never, for a parsed one).
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// How many input columns the macros need (one more than the largest column named).
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Whether a template line reads a cell as a number (`%v`).
    pub fn has_values(&self) -> bool {
        !self.value_columns().is_empty()
    }

    fn value_columns(&self) -> Vec<usize> {
        self.patterns
            .iter()
            .flatten()
            .filter_map(|p| match p {
                Part::Cell {
                    col,
                    map: CellMap::Value,
                    ..
                } => Some(*col),
                _ => None,
            })
            .collect()
    }

    /// The first cell a `%v` macro reads that is not a finite number, as `(sentence, token, column, cell)`
    /// (0-based).
    ///
    /// # Errors
    /// That cell.
    pub fn check_values(
        &self,
        sentences: &[Sentence],
    ) -> Result<(), (usize, usize, usize, String)> {
        let columns = self.value_columns();
        for (i, s) in sentences.iter().enumerate() {
            for &c in &columns {
                let Some(cells) = s.columns.get(c) else {
                    continue;
                };
                if let Some((t, cell)) = cells.iter().enumerate().find(|(_, v)| number(v).is_none())
                {
                    return Err((i, t, c, cell.clone()));
                }
            }
        }
        Ok(())
    }

    /// Calls `f` with each unigram feature string of token `t` and its value (1, or the cell's number for
    /// a `%v` line); a cell the sentence lacks yields no feature.
    pub(crate) fn for_each_feature(
        &self,
        s: &Sentence,
        t: usize,
        buf: &mut String,
        f: impl FnMut(&str, f64),
    ) {
        expand(&self.patterns, s, t, buf, f);
    }

    /// Calls `f` with each bigram feature string of the transition into token `t` (none for the first).
    pub(crate) fn for_each_edge_feature(
        &self,
        s: &Sentence,
        t: usize,
        buf: &mut String,
        mut f: impl FnMut(&str),
    ) {
        if t > 0 {
            expand(&self.edges, s, t, buf, |name, _| f(name));
        }
    }
}

/// A cell as a feature value: a finite number.
fn number(cell: &str) -> Option<f64> {
    cell.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Calls `f` with the text and value of each pattern at token `t` whose cells the sentence has.
fn expand(
    patterns: &[Vec<Part>],
    s: &Sentence,
    t: usize,
    buf: &mut String,
    mut f: impl FnMut(&str, f64),
) {
    'patterns: for parts in patterns {
        buf.clear();
        let mut value = 1.0;
        for part in parts {
            match part {
                Part::Text(text) => buf.push_str(text),
                Part::Cell {
                    row,
                    col,
                    map: CellMap::Value,
                } => {
                    let v = usize::try_from(t as i64 + i64::from(*row))
                        .ok()
                        .and_then(|i| s.columns.get(*col)?.get(i))
                        .and_then(|c| number(c));
                    match v {
                        Some(v) if v != 0.0 => value = v,
                        _ => continue 'patterns,
                    }
                    let _ = write!(buf, "%v[{row},{col}]");
                }
                Part::Cell { row, col, map } => {
                    if !cell(s, t, *row, *col, *map, buf) {
                        continue 'patterns;
                    }
                }
            }
        }
        f(buf, value);
    }
}

/// The word templates both built-ins share: word, lowercase and shape at offsets −2..2 (and column 1, the
/// POS tag, with `pos`), and prefixes and suffixes of 1–4 characters.
fn word_features(text: &mut String, pos: bool) {
    for o in -2i32..=2 {
        let _ = writeln!(
            text,
            "Uw{o}:%x[{o},0]\nUl{o}:%lower[{o},0]\nUs{o}:%shape[{o},0]"
        );
        if pos {
            let _ = writeln!(text, "Up{o}:%x[{o},1]");
        }
    }
    for k in 1..=4 {
        let _ = writeln!(text, "Upre{k}:%prefix{k}[0,0]\nUsuf{k}:%suffix{k}[0,0]");
    }
}

/// Appends the mapped cell to `buf`; false when it has no value (a missing column, a too-short affix).
fn cell(s: &Sentence, t: usize, row: i32, col: usize, map: CellMap, buf: &mut String) -> bool {
    let Some(column) = s.columns.get(col) else {
        return false;
    };
    let i = t as i64 + i64::from(row);
    let text: &str = if i < 0 {
        "<s>"
    } else if i as usize >= column.len() {
        "</s>"
    } else {
        &column[i as usize]
    };
    match map {
        // Read by `expand` as a number, never as text.
        CellMap::Value => return false,
        CellMap::Same => buf.push_str(text),
        CellMap::Lower => buf.push_str(&text.to_lowercase()),
        CellMap::Shape => buf.push_str(&shape(text)),
        CellMap::Prefix(k) | CellMap::Suffix(k) => {
            let lower = text.to_lowercase();
            let n = lower.chars().count();
            if n < k {
                return false;
            }
            let skip = if matches!(map, CellMap::Prefix(_)) {
                0
            } else {
                n - k
            };
            buf.extend(lower.chars().skip(skip).take(k));
        }
    }
    true
}

/// The parts of one template line, or `(0-based column, message)`.
fn parse_line(line: &str) -> Result<Vec<Part>, (usize, String)> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut rest = line;
    while let Some(p) = rest.find('%') {
        text.push_str(&rest[..p]);
        let start = line.len() - rest.len() + p;
        let after = &rest[p + 1..];
        let Some(open) = after.find('[') else {
            return Err((start, "a macro is %NAME[row,column]".into()));
        };
        let name = &after[..open];
        let map = match name {
            "v" => CellMap::Value,
            "x" => CellMap::Same,
            "lower" => CellMap::Lower,
            "shape" => CellMap::Shape,
            _ => {
                let affix = |prefix: &str| {
                    name.strip_prefix(prefix)
                        .and_then(|k| k.parse::<usize>().ok())
                        .filter(|k| (1..=MAX_AFFIX).contains(k))
                };
                match (affix("prefix"), affix("suffix")) {
                    (Some(k), _) => CellMap::Prefix(k),
                    (_, Some(k)) => CellMap::Suffix(k),
                    _ => {
                        return Err((
                            start,
                            format!(
                                "unknown macro %{}: use %x, %lower, %shape, %prefixK, %suffixK (K in 1..={MAX_AFFIX}) or %v",
                                name.chars().take(20).collect::<String>()
                            ),
                        ));
                    }
                }
            }
        };
        let inner = &after[open + 1..];
        let Some(close) = inner.find(']') else {
            return Err((start, "a macro's [row,column] is not closed".into()));
        };
        let (row, col) = inner[..close]
            .split_once(',')
            .and_then(|(r, c)| Some((r.trim().parse::<i32>().ok()?, c.trim().parse::<usize>().ok()?)))
            .filter(|(r, c)| r.unsigned_abs() <= MAX_OFFSET.unsigned_abs() && *c < 1024)
            .ok_or_else(|| {
                (
                    start,
                    format!(
                        "expected [row,column] with |row| <= {MAX_OFFSET} and a column below 1024, got [{}]",
                        inner[..close].chars().take(20).collect::<String>()
                    ),
                )
            })?;
        if !text.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut text)));
        }
        parts.push(Part::Cell { row, col, map });
        rest = &inner[close + 1..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(parts)
}
