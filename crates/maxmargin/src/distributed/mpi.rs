//! The collective operations over MPI (Open MPI through the `mpi` crate), for processes started by
//! `mpirun`. Sums are reduced to rank 0 and broadcast from it, so every rank holds rank 0's bits (an
//! allreduce may associate the additions differently on different ranks); maxima are exact in any order.

use maxmargin_optim::{Collective, OptimError};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Root};

/// This process's place in `MPI_COMM_WORLD`; MPI is finalized when it is dropped.
pub struct Mpi {
    world: SimpleCommunicator,
    // Dropped last: finalizes MPI.
    _universe: mpi::environment::Universe,
}

impl Mpi {
    /// Initializes MPI; `None` when it was initialized already.
    pub fn init() -> Option<Self> {
        let universe = mpi::initialize()?;
        Some(Self {
            world: universe.world(),
            _universe: universe,
        })
    }

    /// Ends every rank of the job with `code` (`MPI_Abort`): a failed rank must not leave the others
    /// waiting in a collective operation.
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }
}

impl Collective for Mpi {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn allreduce_sum(&self, buf: &mut [f64]) -> Result<(), OptimError> {
        let root = self.world.process_at_rank(0);
        let send = buf.to_vec();
        if self.world.rank() == 0 {
            root.reduce_into_root(&send[..], buf, SystemOperation::sum());
        } else {
            root.reduce_into(&send[..], SystemOperation::sum());
        }
        root.broadcast_into(buf);
        Ok(())
    }

    fn allreduce_max(&self, buf: &mut [f64]) -> Result<(), OptimError> {
        let send = buf.to_vec();
        self.world
            .all_reduce_into(&send[..], buf, SystemOperation::max());
        Ok(())
    }

    fn broadcast(&self, buf: &mut [f64], root: usize) -> Result<(), OptimError> {
        self.world.process_at_rank(root as i32).broadcast_into(buf);
        Ok(())
    }
}
