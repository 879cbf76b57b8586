//! The links pass: each link's ends and name, its settings and those of its
//! directions, its schedule, handovers, ARQ, traces, outage process and
//! outage windows, in file order.

use super::check_before_end;
use crate::link::MAX_OUTAGE_CYCLES;
use crate::scenario::{
    link_name, ArqSpec, LossSpec, OutageProcessSpec, QdiscSpec, QueueLimit, Scenario,
    ScenarioError, MAX_RETRIES,
};
use std::collections::BTreeMap;
use wavelab_tcp::{Duration, Rate};

/// Checks every link of `sc`.
pub(super) fn check(sc: &Scenario) -> Result<(), ScenarioError> {
    let mut names = BTreeMap::new();
    for (i, l) in sc.links.iter().enumerate() {
        let p = format!("links[{i}]");
        if l.between[0].is_empty() || l.between[1].is_empty() {
            return Err(ScenarioError::at(
                format!("{p}.between"),
                "node names must not be empty",
            ));
        }
        if l.between[0] == l.between[1] {
            return Err(ScenarioError::at(
                format!("{p}.between"),
                format!("\"{}\" is connected to itself", l.between[0]),
            ));
        }
        let name = link_name(l, i);
        if let Some(j) = names.insert(name.clone(), i) {
            return Err(ScenarioError::at(
                format!("{p}.name"),
                format!("\"{name}\" is already the name of links[{j}]"),
            ));
        }
        check_settings(&p, Some(l.rate), Some(&l.loss), Some(l.queue))?;
        check_qdisc(&format!("{p}.qdisc"), &l.qdisc)?;
        for (dname, d) in [("forward", &l.forward), ("reverse", &l.reverse)] {
            check_settings(&format!("{p}.{dname}"), d.rate, d.loss.as_ref(), d.queue)?;
            if let Some(q) = &d.qdisc {
                check_qdisc(&format!("{p}.{dname}.qdisc"), q)?;
            }
        }
        for (k, s) in l.schedule.iter().enumerate() {
            let sp = format!("{p}.schedule[{k}]");
            if s.rate.is_none() && s.delay.is_none() && s.queue.is_none() && s.loss.is_none() {
                return Err(ScenarioError::at(
                    sp,
                    "changes nothing: set rate, delay, queue or loss",
                ));
            }
            check_settings(&sp, s.rate, s.loss.as_ref(), s.queue)?;
            check_before_end(sc, &format!("{sp}.at"), s.at)?;
        }
        super::handovers::check(sc, &p, l)?;
        if let Some(a) = &l.arq {
            check_arq(&format!("{p}.arq"), a)?;
        }
        for (dname, d) in [("forward", &l.forward), ("reverse", &l.reverse)] {
            if let Some(a) = &d.arq {
                check_arq(&format!("{p}.{dname}.arq"), a)?;
            }
        }
        super::traces::check(&p, l)?;
        super::leo::check(&p, l, sc.duration)?;
        if let Some(o) = &l.outage_process {
            check_outage_process(&format!("{p}.outage_process"), o, sc.duration)?;
        }
        for (k, o) in l.outages.iter().enumerate() {
            check_before_end(sc, &format!("{p}.outages[{k}].start"), o.start)?;
            if o.duration.is_zero() {
                return Err(ScenarioError::at(
                    format!("{p}.outages[{k}].duration"),
                    "must be above zero",
                ));
            }
        }
    }
    Ok(())
}

/// Checks the link settings present under `path` (`<path>.rate`, ...).
pub(super) fn check_settings(
    path: &str,
    rate: Option<Rate>,
    loss: Option<&LossSpec>,
    queue: Option<QueueLimit>,
) -> Result<(), ScenarioError> {
    if let Some(r) = rate {
        check_rate(&format!("{path}.rate"), r)?;
    }
    if let Some(l) = loss {
        check_loss(&format!("{path}.loss"), l)?;
    }
    if let Some(q) = queue {
        check_queue(&format!("{path}.queue"), q)?;
    }
    Ok(())
}

/// Checks a queue discipline's parameters; the error names the parameter.
fn check_qdisc(path: &str, q: &QdiscSpec) -> Result<(), ScenarioError> {
    use super::flows::{field_of, rest_of};
    q.validate()
        .map_err(|m| ScenarioError::at(format!("{path}.{}", field_of(&m)), rest_of(&m)))
}

fn check_rate(path: &str, r: Rate) -> Result<(), ScenarioError> {
    if r.as_bps() == 0 {
        return Err(ScenarioError::at(
            path,
            "must be above zero (use an outage to stop a link)",
        ));
    }
    Ok(())
}

fn check_queue(path: &str, q: QueueLimit) -> Result<(), ScenarioError> {
    match q {
        QueueLimit::Packets(0) | QueueLimit::Bytes(0) => {
            Err(ScenarioError::at(path, "must hold at least one packet"))
        }
        _ => Ok(()),
    }
}

pub(super) fn check_loss(path: &str, l: &LossSpec) -> Result<(), ScenarioError> {
    let probs: Vec<(&str, f64)> = match *l {
        LossSpec::None => vec![],
        LossSpec::Bernoulli { p } => vec![("p", p)],
        LossSpec::GilbertElliott {
            p_good_bad,
            p_bad_good,
            loss_good,
            loss_bad,
        } => vec![
            ("p_good_bad", p_good_bad),
            ("p_bad_good", p_bad_good),
            ("loss_good", loss_good),
            ("loss_bad", loss_bad),
        ],
    };
    for (name, p) in probs {
        if !(0.0..=1.0).contains(&p) {
            return Err(ScenarioError::at(
                format!("{path}.{name}"),
                format!("{p:?} is not a probability (0 to 1)"),
            ));
        }
    }
    Ok(())
}

/// Checks the ranges of link-layer ARQ the types cannot.
fn check_arq(path: &str, a: &ArqSpec) -> Result<(), ScenarioError> {
    if a.retries > MAX_RETRIES {
        return Err(ScenarioError::at(
            format!("{path}.retries"),
            format!("{} is more than {MAX_RETRIES}", a.retries),
        ));
    }
    if let Some(b) = &a.backoff {
        if b.cw_min > b.cw_max {
            return Err(ScenarioError::at(
                format!("{path}.backoff.cw_min"),
                format!("{} is above cw_max ({})", b.cw_min, b.cw_max),
            ));
        }
    }
    Ok(())
}

/// Checks the ranges of an outage process the types cannot.
fn check_outage_process(
    path: &str,
    o: &OutageProcessSpec,
    duration: Duration,
) -> Result<(), ScenarioError> {
    // about duration / (up + down) windows are drawn before the run
    let cycles = duration.as_nanos() / (o.up + o.down).as_nanos().max(1);
    if cycles > MAX_OUTAGE_CYCLES {
        return Err(ScenarioError::at(
            path,
            format!(
                "up {} + down {} over {duration} make about {cycles} outages, more than \
                 {MAX_OUTAGE_CYCLES}",
                o.up, o.down
            ),
        ));
    }
    for (name, d) in [("up", o.up), ("down", o.down)] {
        // a mean below 1 ms would make millions of windows per second
        if d < Duration::from_millis(1) {
            return Err(ScenarioError::at(
                format!("{path}.{name}"),
                format!("{d} is below 1ms"),
            ));
        }
    }
    Ok(())
}
