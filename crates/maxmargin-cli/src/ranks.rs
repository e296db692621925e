//! `mpirun -np P maxmargin train DATA -o MODEL [...]`: training over MPI ranks. Each rank reads its share of
//! the file (byte ranges cut at line starts), the ranks train together, rank 0 writes the model atomically
//! and prints the report (and the `--trace` file); the others write nothing. A rank that fails prints its error and ends the whole
//! job (`MPI_Abort`), so no rank waits for it and no model file is written.

use super::*;

/// The number of ranks an MPI launcher started (Open MPI's `OMPI_COMM_WORLD_SIZE`, MPICH's and PMIx's
/// `PMI_SIZE`), when one did.
pub(crate) fn launched() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.parse().ok())
}

/// Trains over the ranks the launcher started.
#[cfg(feature = "mpi")]
pub(crate) fn train(cmd: &TrainCmd) -> Result<i32> {
    use maxmargin::optim::Collective;
    let Some(mpi) = maxmargin::distributed::mpi::Mpi::init() else {
        bail!("MPI could not be initialized");
    };
    match train_on(&mpi, cmd) {
        Ok(code) => Ok(code),
        Err(e) => {
            // Most errors (a file that cannot be split, a bad flag) meet every rank alike: rank 0 speaks and
            // its abort ends the others, which wait a moment first, so one line is printed, not one a rank.
            if mpi.rank() != 0 {
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
            note!("error: rank {} of {}: {e:#}", mpi.rank(), mpi.size());
            mpi.abort(1)
        }
    }
}

/// Without the `mpi` feature a launcher's ranks would each train the whole problem into the same file.
#[cfg(not(feature = "mpi"))]
pub(crate) fn train(_: &TrainCmd) -> Result<i32> {
    bail!(
        "started by an MPI launcher with {} ranks, but this maxmargin was built without MPI: build it with \
         `cargo build --release -p maxmargin-cli --features mpi` (needs Open MPI and libclang)",
        launched().unwrap_or(0)
    )
}

#[cfg(feature = "mpi")]
fn train_on(comm: &dyn maxmargin::optim::Collective, cmd: &TrainCmd) -> Result<i32> {
    let (data_path, output, args) = (&cmd.data, &cmd.output, &cmd.opts);
    if cmd.task == TaskArg::Multilabel
        || cmd
            .format
            .is_some_and(|f| f == FormatArg::Conll || f == FormatArg::Csv)
        || crate::load::is_csv(data_path)
    {
        bail!(
            "over several ranks, train takes --task binary, multiclass (LIBSVM), chain (svm_hmm) or graph (JSON \
             lines) only, so far"
        );
    }
    if cmd.stream {
        bail!(
            "--stream reads the whole file on one process; over several ranks each reads its own share"
        );
    }
    refuse(
        &[
            ("--threads", args.threads.is_some()),
            ("--blocks", args.blocks.is_some()),
            ("--trace-weights", args.trace_weights),
            ("--sample-weights", args.sample_weights.is_some()),
            ("--warm-start", args.warm_start.is_some()),
        ],
        "does not apply over several ranks (yet): each rank runs one thread over its share",
    )?;
    if cmd.task == TaskArg::Graph {
        let shard = maxmargin::io::shard::read_graph_shard(data_path, comm.rank(), comm.size())?;
        let (svm, _) = structured::estimator(args, maxmargin::structured_svm::Task::Graph)?;
        let report = svm.fit_graph_shard(comm, shard, crate::graph::options(cmd))?;
        if comm.rank() != 0 {
            return Ok(0);
        }
        report.model.save(output)?;
        let converged = crate::graph::finished(
            cmd,
            &svm,
            &report,
            crate::report::Ran::OverRanks(comm.size()),
        )?;
        return Ok(if cmd.require_convergence && !converged {
            NOT_CONVERGED
        } else {
            0
        });
    }
    if cmd.task == TaskArg::Chain {
        let (rank, size) = (comm.rank(), comm.size());
        let shard = maxmargin::io::shard::read_sequence_shard(data_path, rank, size)?;
        let (svm, _) = structured::estimator(args, maxmargin::structured_svm::Task::Chain)?;
        let report = svm.fit_chain_shard(comm, shard)?;
        if comm.rank() != 0 {
            return Ok(0);
        }
        report.model.save(output)?;
        let converged = structured::finished(
            args,
            output,
            &svm,
            (&report.model, &report.trace, &report.warnings),
            crate::report::Ran::OverRanks(comm.size()),
        )?;
        return Ok(if cmd.require_convergence && !converged {
            NOT_CONVERGED
        } else {
            0
        });
    }
    let shard = maxmargin::io::shard::read_shard(data_path, comm.rank(), comm.size())?;
    let converged = if cmd.task == TaskArg::Multiclass {
        // Checkpoints: every rank writes and resumes its own FILE.rank<r>.
        let (svm, _) = structured::estimator(args, maxmargin::structured_svm::Task::Multiclass)?;
        let report = svm.fit_multiclass_shard(comm, shard)?;
        if comm.rank() != 0 {
            return Ok(0);
        }
        report.model.save(output)?;
        structured::finished(
            args,
            output,
            &svm,
            (&report.model, &report.trace, &report.warnings),
            crate::report::Ran::OverRanks(comm.size()),
        )?
    } else {
        // Checkpoints: every rank writes and resumes its own FILE.rank<r>.
        let svm = binary::params(args)?
            .check()?
            .checkpoints(args.checkpoints());
        let FitReport {
            model,
            trace,
            warnings,
        } = svm.fit_shard(comm, shard)?;
        if comm.rank() != 0 {
            return Ok(0);
        }
        model.save(output)?;
        let what = format!(
            "{} over {} ranks on {} examples x {} features",
            svm.params().solver.kind(),
            comm.size(),
            model.training.n_samples,
            model.n_features
        );
        binary::finished(
            args,
            output,
            svm.params(),
            (&model, &trace, &warnings),
            (what, false),
        )?
    };
    Ok(if cmd.require_convergence && !converged {
        NOT_CONVERGED
    } else {
        0
    })
}
