//! The workloads' transfers ([`wavelab_model::workload`]): which flows
//! they are, their ideal completion times, and the transfers table read
//! from their senders.

use crate::simulation::Simulation;
use wavelab_model::tables::transfers::{transfer_table, TransferRecord};
use wavelab_model::tables::Table;
use wavelab_tcp::{Duration, Instant};

/// One transfer of a workload, as the simulation runs it.
#[derive(Clone, Debug)]
pub(crate) struct PlannedTransfer {
    /// Its workload's name.
    pub workload: String,
    /// Its flow (an index into the simulation's flows).
    pub flow: usize,
    /// Its ideal completion time
    /// ([`wavelab_model::tables::transfers`]).
    pub ideal: Duration,
}

impl Simulation {
    /// True if flow `f` is a workload's transfer that has completed: the
    /// time series leave it out from then on.
    pub(crate) fn finished_transfer(&self, f: usize) -> bool {
        self.transfers.first().is_some_and(|t| f >= t.flow)
            && self.flows[f].sender.stats().completed_at.is_some()
    }

    /// The transfers table so far.
    pub(crate) fn transfer_table(&self) -> Table {
        let rows: Vec<TransferRecord> = self
            .transfers
            .iter()
            .map(|t| {
                let f = &self.flows[t.flow];
                TransferRecord {
                    workload: t.workload.clone(),
                    flow: f.name.clone(),
                    flow_index: t.flow as u32,
                    start: f.start - Instant::ZERO,
                    size: f.size.unwrap_or_default(),
                    completion_time: f.sender.stats().completed_at.map(|c| c - f.start),
                    ideal: t.ideal,
                }
            })
            .collect();
        transfer_table(&rows)
    }
}
