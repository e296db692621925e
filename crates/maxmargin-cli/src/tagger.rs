//! Sequence labelling on CoNLL column files: `train --task chain --format conll [--template ...]`, and
//! `predict` / `eval` for the taggers it saves (model kind `chain-conll`).

use crate::TrainArgs;
use anyhow::{Context, Result, bail};
use maxmargin::io::conll::{self, Layout, Sentence, Template};
use maxmargin::structured_svm::Task;
use maxmargin::tagger::{LatentTagger, Tagger};
use std::path::Path;

/// The templates `--template` names: a built-in or a file.
fn template(name: Option<&str>, train: &[Sentence]) -> Result<Template> {
    let inputs = train.iter().map(|s| s.columns.len()).min().unwrap_or(0);
    Ok(match name {
        None if inputs >= 2 => Template::chunking(),
        None | Some("ner") => Template::ner(inputs),
        Some("chunking") => Template::chunking(),
        Some(file) => {
            let path = Path::new(file);
            if !path.exists() {
                bail!("--template {file}: not chunking, ner or an existing template file");
            }
            Template::read(path)?
        }
    })
}

/// Trains a tagger on a CoNLL file and saves it; returns whether training converged.
pub fn train(data: &Path, output: &Path, name: Option<&str>, args: &TrainArgs) -> Result<bool> {
    let sentences = conll::read(crate::load::not_csv(data, "CoNLL")?)?;
    if sentences.is_empty() {
        bail!("{}: no sentences", data.display());
    }
    let template = match (template(name, &sentences)?, args.structural.order) {
        (t, Some(1)) if t.second_order() => bail!(
            "--order 1: the template {} asks for second-order transitions (its T line)",
            t.name()
        ),
        (t, Some(2)) => t.with_second_order(),
        (t, _) => t,
    };
    maxmargin::tagger::check_values(&template, &sentences, data)?;
    // The flags are checked before the dictionary is built (minutes on a large corpus).
    let weights = tag_weights(args, &sentences, data)?;
    let (mut svm, mut bar) =
        crate::structured::estimator_weighted(args, Task::Chain, Some(weights))?;
    let min_count = args.structural.min_count.unwrap_or(1);
    let features =
        maxmargin::tagger::dictionary_with_rows(&sentences, template, min_count, args.threads)?;
    // A count that no feature reaches leaves only the transitions to learn: a tagger of the tag counts.
    if min_count > 1 && features.features().n_features() == 0 {
        bail!(
            "--min-count {min_count} keeps no feature of {}: none fires that often in its tokens; give a \
             smaller count",
            data.display()
        );
    }
    if let Some(states) = args.structural.latent_states {
        if args.warm_start.is_some() {
            bail!("--warm-start does not apply to --latent-states yet");
        }
        let fit =
            maxmargin::tagger::fit_latent(&svm, &sentences, features, states, data, &mut bar)?;
        bar.finish();
        fit.model.save(output)?;
        let m = &fit.model.model;
        let what = format!("{} tags of {states} states", m.tags);
        let run = (&m.model, &fit.trace[..], &fit.warnings[..]);
        return crate::latent::rounds_reported(args, output, &svm, run, (&what, &m.rounds, m.stop));
    }
    if let Some(path) = &args.warm_start {
        let warm = Tagger::load(path)?;
        if warm.features != *features.features() {
            bail!(
                "--warm-start {}: that tagger's templates, features or tags differ from this data's",
                path.display()
            );
        }
        svm = svm.warm_start_from(&warm.model)?;
    }
    let fit = maxmargin::tagger::fit_with_map(&svm, &sentences, features, data, &mut bar)?;
    bar.finish();
    fit.model.save(output)?;
    if !args.quiet {
        // The templates are stored in the model; say which were used, and why when they were not named.
        let f = &fit.model.features;
        let inputs = f.inputs();
        let why = match name {
            None => format!(
                ", chosen for {inputs} input column{}: --template chunking|ner|FILE chooses",
                if inputs == 1 { "" } else { "s" }
            ),
            Some(_) => String::new(),
        };
        let (bigram_patterns, bigram_features) = match f.template().edge_len() {
            0 => (String::new(), String::new()),
            b => (
                format!(" and {b} bigram"),
                format!(
                    " and {} bigram ({} transition weights)",
                    f.n_edge_features(),
                    f.n_edge_features() * f.n_tags() * f.n_tags()
                ),
            ),
        };
        let order = match f.template().second_order() {
            true => format!("; second-order transitions ({} weights)", f.n_tags().pow(3)),
            false => String::new(),
        };
        note!(
            "templates: {}, {} patterns{bigram_patterns}{why}; {} features{bigram_features}, {} tags{order}",
            f.template().name(),
            f.template().len(),
            f.n_features(),
            f.n_tags()
        );
    }
    crate::structured::finished(
        args,
        output,
        &svm,
        (&fit.model.model, &fit.trace, &fit.warnings),
        crate::report::Ran::InMemory,
    )
}

/// The `-w TAG=WEIGHT` weights by tag name, as the chain model numbers its tags (1-based), in tag order.
fn tag_weights(args: &TrainArgs, train: &[Sentence], data: &Path) -> Result<Vec<(f64, f64)>> {
    let tags = maxmargin::io::conll::FeatureMap::tag_order(train);
    let given = &args.class_weights;
    if let Some((_, w)) = crate::args::repeated(given, |a, b| a.label == b.label) {
        bail!("-w names the tag {:?} twice", w.label);
    }
    let weights = args
        .class_weights
        .iter()
        .map(|w| match tags.iter().position(|t| *t == w.label) {
            Some(id) => Ok((id as f64 + 1.0, w.weight)),
            None => {
                let shown: Vec<&str> = tags.iter().take(12).map(String::as_str).collect();
                bail!(
                    "-w {}={}: {} has no tag {:?} (its tags: {}{})",
                    w.label,
                    w.weight,
                    data.display(),
                    w.label,
                    shown.join(", "),
                    if tags.len() > shown.len() {
                        ", ..."
                    } else {
                        ""
                    }
                )
            }
        })
        .collect::<Result<Vec<_>>>()?;
    crate::structured::tag_order(weights)
}

/// A tagger file of either kind.
enum AnyTagger {
    Plain(Box<Tagger>),
    Latent(Box<LatentTagger>),
}

impl AnyTagger {
    fn load(path: &Path) -> Result<Self> {
        let kind = maxmargin::io::model_file::read_header(path)?.kind;
        Ok(if kind == maxmargin::tagger::LATENT_TAGGER_KIND {
            Self::Latent(Box::new(LatentTagger::load(path)?))
        } else {
            Self::Plain(Box::new(Tagger::load(path)?))
        })
    }

    fn features(&self) -> &conll::FeatureMap {
        match self {
            Self::Plain(t) => &t.features,
            Self::Latent(t) => &t.features,
        }
    }

    fn tag_from(&self, sentences: &[Sentence], data: &Path) -> Result<Vec<Vec<String>>> {
        Ok(match self {
            Self::Plain(t) => t.tag_from(sentences, data)?,
            Self::Latent(t) => t.tag_from(sentences, data)?,
        })
    }

    fn evaluate_from(
        &self,
        sentences: &[Sentence],
        lambda: Option<f64>,
        data: &Path,
    ) -> Result<maxmargin::tagger::TaggerEvaluation> {
        Ok(match self {
            Self::Plain(t) => t.evaluate_from(sentences, lambda, data)?,
            Self::Latent(t) => t.evaluate_from(sentences, lambda, data)?,
        })
    }
}

/// Reads text for a tagger: its input columns, with or without the tag column.
fn read(tagger: &AnyTagger, data: &Path) -> Result<Vec<Sentence>> {
    maxmargin::io::cache::refuse(data)?;
    let reader = maxmargin::io::open_maybe_gz(crate::load::not_csv(data, "CoNLL")?)?;
    Ok(conll::read_layout(
        reader,
        data,
        Layout::Inputs(tagger.features().inputs()),
    )?)
}

/// The tagged text, line for line as the input (conlleval reads it back, and `paste` lines it up): each
/// token's line as read (the gold tag too, when there) with the predicted tag appended (after a tab on lines
/// with tabs, else a space); blank and `-DOCSTART-` lines as they are.
pub fn predict(model_path: &Path, data: &Path) -> Result<Vec<String>> {
    use std::io::Read;
    let tagger = AnyTagger::load(model_path)?;
    maxmargin::io::cache::refuse(data)?;
    // The text is read once (standard input cannot be read twice): parsed into sentences, then walked again
    // for its lines.
    let mut text = Vec::new();
    maxmargin::io::open_maybe_gz(crate::load::not_csv(data, "CoNLL")?)?
        .read_to_end(&mut text)
        .with_context(|| data.display().to_string())?;
    let layout = Layout::Inputs(tagger.features().inputs());
    let sentences = conll::read_layout(text.as_slice(), data, layout)?;
    let tags = tagger.tag_from(&sentences, data)?;
    let mut predicted = tags.iter().flatten();
    let mut lines = Vec::with_capacity(sentences.iter().map(|s| s.len() + 1).sum());
    let mut ended_in_token = false;
    conll::visit_lines(text.as_slice(), data, |line, token| {
        ended_in_token = token;
        // A token's columns, then its predicted tag, one separator between them (conlleval splits on one);
        // a `-DOCSTART-` line gets the outside tag, so that every line of columns has as many.
        let docstart = !token && line.split_ascii_whitespace().next() == Some("-DOCSTART-");
        let tag = if token {
            predicted.next().map(String::as_str)
        } else {
            docstart.then_some("O")
        };
        lines.push(match tag {
            Some(tag) => {
                let sep = if line.contains('\t') { "\t" } else { " " };
                let mut cells: Vec<&str> = line.split_ascii_whitespace().collect();
                cells.push(tag);
                cells.join(sep)
            }
            None => line.to_string(),
        });
        Ok(())
    })?;
    // The last sentence ends with a blank line, as every sentence does for conlleval.
    if ended_in_token {
        lines.push(String::new());
    }
    Ok(lines)
}

/// Token accuracy and, for chunk tags, conlleval's chunk precision, recall and F1 (overall and by type) of a
/// tagger on labelled CoNLL text.
pub fn eval(model_path: &Path, data: &Path, lambda: Option<f64>, json: bool) -> Result<()> {
    let tagger = AnyTagger::load(model_path)?;
    let sentences = read(&tagger, data)?;
    if sentences.iter().any(|s| s.tags.is_empty()) {
        bail!(
            "{}: eval needs the tag column (the model reads {} input columns; the file has no column after them)",
            data.display(),
            tagger.features().inputs()
        );
    }
    let e = tagger
        .evaluate_from(&sentences, lambda, data)
        .with_context(|| data.display().to_string())?;
    if lambda.is_some() && e.objective.is_none() {
        bail!(
            "--lambda: the objective needs every tag known to the model; {} has {} tokens with tags training never saw",
            data.display(),
            e.unknown_tags
        );
    }
    if json {
        out!("{}", serde_json::to_string(&e)?);
        return Ok(());
    }
    out!("sentences         {}", e.sentences);
    out!("tokens            {}", e.tokens);
    out!("token accuracy    {:.6}", e.token_accuracy);
    match &e.chunks {
        Some(c) => {
            out!(
                "chunks            {} in the data, {} found, {} right (exact span and type)",
                c.gold_chunks,
                c.predicted_chunks,
                c.correct_chunks
            );
            out!("chunk precision   {:.6}", c.chunk_precision);
            out!("chunk recall      {:.6}", c.chunk_recall);
            out!("chunk F1          {:.6}", c.chunk_f1);
            // conlleval's table, one row per chunk type.
            let width = c.per_type.keys().map(String::len).max().unwrap_or(0).max(4);
            out!(
                "{:width$}  precision  recall     F1         support  found",
                "type"
            );
            for (kind, t) in &c.per_type {
                out!(
                    "{kind:width$}  {:<9.6}  {:<9.6}  {:<9.6}  {:<7}  {}",
                    t.precision,
                    t.recall,
                    t.f1,
                    t.support,
                    t.found
                );
            }
        }
        None => out!(
            "chunks            none: the tags are not chunk tags (O, B-X, I-X, E-X, S-X); token accuracy is the measure"
        ),
    }
    if e.unknown_tags > 0 {
        out!(
            "unknown tags      {} tokens (tags training never saw, counted as errors)",
            e.unknown_tags
        );
    }
    if let (Some(l), Some(o)) = (e.lambda, e.objective) {
        out!("objective         {o:.6}  (lambda {l:e})");
    }
    Ok(())
}
