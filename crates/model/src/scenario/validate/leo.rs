//! The LEO pass: a link's LEO access model ([`crate::link::LeoSpec`]): its
//! ranges, and no other source of the settings it draws (traces, direction
//! overrides, the link's loss, scheduled changes, handovers).

use super::links::check_loss;
use crate::link::{LeoSpec, MAX_OUTAGE_CYCLES};
use crate::scenario::{LinkSpec, ScenarioError};
use wavelab_tcp::Duration;

/// Checks the `leo` table of link `l` (at path `p`, e.g. `links[1]`) for a
/// run of `duration`.
pub(super) fn check(p: &str, l: &LinkSpec, duration: Duration) -> Result<(), ScenarioError> {
    let Some(leo) = &l.leo else { return Ok(()) };
    let at = |field: &str| format!("{p}.leo.{field}");
    check_ranges(&at, leo, duration)?;
    // every other source of the rate, delay and loss it draws
    let refuse = |path: String, what: &str| {
        Err(ScenarioError::at(
            path,
            format!("the LEO model ({p}.leo) gives the link's {what}; keep one"),
        ))
    };
    if !matches!(l.loss, crate::link::LossSpec::None) {
        return refuse(
            format!("{p}.loss"),
            "loss (set leo.downlink_loss and leo.uplink_loss)",
        );
    }
    for (dname, d) in [("forward", &l.forward), ("reverse", &l.reverse)] {
        let fields = [
            ("rate", d.rate.is_some(), "rate"),
            ("delay", d.delay.is_some(), "delay"),
            ("loss", d.loss.is_some(), "loss"),
            ("trace", d.trace.is_some(), "rate"),
            ("rate_trace", d.rate_trace.is_some(), "rate"),
            ("delay_trace", d.delay_trace.is_some(), "delay"),
            ("loss_trace", d.loss_trace.is_some(), "loss"),
        ];
        for (field, set, what) in fields {
            if set {
                return refuse(format!("{p}.{dname}.{field}"), what);
            }
        }
    }
    for (j, e) in l.schedule.iter().enumerate() {
        for (field, set) in [
            ("rate", e.rate.is_some()),
            ("delay", e.delay.is_some()),
            ("loss", e.loss.is_some()),
        ] {
            if set {
                return refuse(format!("{p}.schedule[{j}].{field}"), field);
            }
        }
    }
    if !l.handovers.is_empty() {
        return refuse(
            format!("{p}.handovers"),
            "changes of path (its reconfigurations are its handovers)",
        );
    }
    Ok(())
}

fn check_ranges(
    at: &dyn Fn(&str) -> String,
    leo: &LeoSpec,
    duration: Duration,
) -> Result<(), ScenarioError> {
    if leo.period < Duration::from_millis(1) {
        return Err(ScenarioError::at(
            at("period"),
            format!("{} is below 1ms", leo.period),
        ));
    }
    let intervals = duration.as_nanos() / leo.period.as_nanos();
    if intervals > MAX_OUTAGE_CYCLES {
        return Err(ScenarioError::at(
            at("period"),
            format!(
                "{} over {duration} makes {intervals} reconfigurations, more than \
                 {MAX_OUTAGE_CYCLES}",
                leo.period
            ),
        ));
    }
    if leo.delay.min > leo.delay.max {
        return Err(ScenarioError::at(
            at("delay"),
            format!("min {} is above max {}", leo.delay.min, leo.delay.max),
        ));
    }
    for (name, r) in [("downlink", leo.downlink), ("uplink", leo.uplink)] {
        if r.min.as_bps() == 0 {
            return Err(ScenarioError::at(
                format!("{}.min", at(name)),
                "must be above zero (set outage for a dark link)",
            ));
        }
        if r.min > r.max {
            return Err(ScenarioError::at(
                at(name),
                format!("min {} is above max {}", r.min, r.max),
            ));
        }
    }
    if !leo.spike.is_zero() && leo.spike_duration.is_zero() {
        return Err(ScenarioError::at(
            at("spike_duration"),
            format!(
                "must be above zero for a spike of {} to last (or set spike = \"0s\")",
                leo.spike
            ),
        ));
    }
    if leo.outage >= leo.period {
        return Err(ScenarioError::at(
            at("outage"),
            format!(
                "{} is not shorter than the period {}: the link would never be up",
                leo.outage, leo.period
            ),
        ));
    }
    check_loss(&at("downlink_loss"), &leo.downlink_loss)?;
    check_loss(&at("uplink_loss"), &leo.uplink_loss)?;
    Ok(())
}
