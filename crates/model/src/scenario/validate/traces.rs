//! The traces pass: the trace fields of a link direction (a Mahimahi
//! `trace`; CSV traces of its rate, delay and loss, see
//! [`crate::link::CsvTrace`]; CellReplay's traces; `reorder`): every file
//! read (errors name the file and the line), no two sources of one setting.

use crate::link::{CsvTrace, MahimahiTrace, Quantity, SizeDelays, TrainTrace};
use crate::scenario::{DirectionSpec, LinkSpec, ScenarioError};

/// Checks the trace fields of link `l` (at path `p`, e.g. `links[1]`).
pub(super) fn check(p: &str, l: &LinkSpec) -> Result<(), ScenarioError> {
    for (k, (dname, d)) in [("forward", &l.forward), ("reverse", &l.reverse)]
        .into_iter()
        .enumerate()
    {
        let at = |field: &str| format!("{p}.{dname}.{field}");
        if let Some(file) = &d.trace {
            MahimahiTrace::load(file).map_err(|e| ScenarioError::at(at("trace"), e.to_string()))?;
            if d.arq.is_some() || l.arq.is_some() {
                return Err(ScenarioError::at(
                    at("trace"),
                    "a trace and link-layer ARQ on one direction are not supported yet",
                ));
            }
        }
        cellreplay(&at, l, d)?;
        let csv = [
            ("rate_trace", &d.rate_trace, Quantity::Rate),
            ("loss_trace", &d.loss_trace, Quantity::Loss),
        ];
        for (field, file, what) in csv {
            if let Some(file) = file {
                CsvTrace::load(file, what)
                    .map_err(|e| ScenarioError::at(at(field), e.to_string()))?;
            }
        }
        if let Some(file) = &d.delay_trace {
            CsvTrace::load_delay(file, d.delay_trace_format)
                .map_err(|e| ScenarioError::at(at("delay_trace"), e.to_string()))?;
        } else if !d.delay_trace_format.is_csv() {
            return Err(ScenarioError::at(
                at("delay_trace_format"),
                "there is no delay_trace to read",
            ));
        }
        if d.trace.is_some() && d.rate_trace.is_some() {
            return Err(ScenarioError::at(
                at("rate_trace"),
                "the direction's rate already comes from its Mahimahi trace (trace); keep one",
            ));
        }
        if !d.delay_interpolation.is_step() && d.delay_trace.is_none() {
            return Err(ScenarioError::at(
                at("delay_interpolation"),
                "there is no delay_trace to interpolate",
            ));
        }
        // a scheduled change of a setting a trace gives would be ignored
        let rate_from = if d.trace.is_some() {
            Some("trace")
        } else if d.rate_trace.is_some() {
            Some("rate_trace")
        } else {
            None
        };
        let delay_from = d.delay_trace.as_ref().map(|_| "delay_trace");
        let loss_from = d.loss_trace.as_ref().map(|_| "loss_trace");
        let changes = l
            .schedule
            .iter()
            .enumerate()
            .filter(|(_, e)| e.direction.covers(k))
            .map(|(j, e)| (format!("schedule[{j}]"), e.rate, e.delay, e.loss))
            .chain(
                l.handovers
                    .iter()
                    .enumerate()
                    .map(|(j, h)| (format!("handovers[{j}]"), h.rate, h.delay, h.loss)),
            );
        for (entry, rate, delay, loss) in changes {
            let conflicts = [
                ("rate", rate.is_some(), rate_from),
                ("delay", delay.is_some(), delay_from),
                ("loss", loss.is_some(), loss_from),
            ];
            for (setting, changed, from) in conflicts {
                if let (true, Some(from)) = (changed, from) {
                    return Err(ScenarioError::at(
                        format!("{p}.{entry}.{setting}"),
                        format!(
                            "the {dname} direction's {setting} comes from its {from}; a change \
                             of it here would be ignored"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// CellReplay's fields of direction `d`: its files read, the heavy trace
/// given, and nothing else that would set the delay, the rate or the queue.
fn cellreplay(
    at: &dyn Fn(&str) -> String,
    l: &LinkSpec,
    d: &DirectionSpec,
) -> Result<(), ScenarioError> {
    let Some(train) = &d.cellreplay_train else {
        for (field, set) in [
            ("cellreplay_size_delay", d.cellreplay_size_delay.is_some()),
            ("cellreplay_idle", d.cellreplay_idle.is_some()),
        ] {
            if set {
                return Err(ScenarioError::at(
                    at(field),
                    "it goes with cellreplay_train (CellReplay's packet-train trace), which this \
                     direction has not",
                ));
            }
        }
        return Ok(());
    };
    TrainTrace::load(train)
        .map_err(|e| ScenarioError::at(at("cellreplay_train"), e.to_string()))?;
    if let Some(f) = &d.cellreplay_size_delay {
        SizeDelays::load(f)
            .map_err(|e| ScenarioError::at(at("cellreplay_size_delay"), e.to_string()))?;
    }
    if d.trace.is_none() {
        return Err(ScenarioError::at(
            at("trace"),
            "CellReplay replays the packet-train trace (cellreplay_train) with a heavy \
             delivery-opportunity trace: give it as trace (Mahimahi's format)",
        ));
    }
    let refused = [
        ("delay_trace", d.delay_trace.is_some()),
        ("rate_trace", d.rate_trace.is_some()),
        ("reorder", d.reorder),
        (
            "qdisc",
            !d.qdisc.as_ref().unwrap_or(&l.qdisc).is_drop_tail(),
        ),
    ];
    if let Some((field, _)) = refused.iter().find(|(_, set)| *set) {
        return Err(ScenarioError::at(
            at(field),
            "a direction replayed by CellReplay (cellreplay_train) takes its delay and \
             capacity from its traces through a drop-tail queue; remove this field",
        ));
    }
    Ok(())
}
