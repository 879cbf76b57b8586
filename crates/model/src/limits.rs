//! Resource limits of a scenario, checked before anything is allocated.
//!
//! A scenario is data a user (or a sweep, or a fuzzer) wrote; a unit
//! mistake can ask for a hundred million flows or a billion samples. These
//! limits turn such a request into an error that names the field and the
//! value, instead of an allocation failure that kills the process. Each one
//! is far above what the shipped studies and benchmarks use and well within
//! a workstation's memory; `docs/scenarios.md` lists them with the memory
//! they correspond to.
//!
//! The packet log cannot be bounded from the scenario alone (how many
//! packets a flow sends depends on what happens), so it is bounded while the
//! run goes: [`MAX_LOG_ROWS`], enforced by the simulation, which stops the
//! run with an error naming `log_packets` when the log reaches it.

use crate::scenario::{Scenario, ScenarioError};

/// The most flows a scenario may have, replicas (`count`) included. A flow
/// costs about 2 KB before the run starts, plus the packets it keeps in
/// flight.
pub const MAX_FLOWS: u64 = 100_000;

/// The most links a scenario may have.
pub const MAX_LINKS: usize = 10_000;

/// The most samples per flow a run may record (a 1 ms interval over almost 3
/// hours); more is almost always a unit mistake.
pub const MAX_SAMPLES: u64 = 10_000_000;

/// The most rows of time series a run may record: one per flow per sample,
/// plus one per link direction per sample when queues are recorded. A row
/// costs about 100 bytes in the simulator and as much again in Python, so the
/// limit is about 10 GB.
pub const MAX_SERIES_ROWS: u64 = 50_000_000;

/// The most rows the packet log may hold (about 70 bytes each in the
/// simulator, some 200 bytes once in Python: about 4 GB). The run stops
/// when the log reaches it (checked every few thousand events).
pub const MAX_LOG_ROWS: usize = 20_000_000;

/// Checks the sizes a scenario asks for, before any of it is allocated.
pub(crate) fn check(sc: &Scenario) -> Result<(), ScenarioError> {
    if sc.links.len() > MAX_LINKS {
        return Err(ScenarioError::at(
            "links",
            format!("{} links (at most {MAX_LINKS})", sc.links.len()),
        ));
    }
    let mut flows: u64 = 0;
    for (i, f) in sc.flows.iter().enumerate() {
        flows += u64::from(f.count);
        if flows > MAX_FLOWS {
            return Err(ScenarioError::at(
                format!("flows[{i}].count"),
                format!(
                    "{} makes {flows} flows in all (at most {MAX_FLOWS})",
                    f.count
                ),
            ));
        }
    }
    // (a zero interval is refused before this check)
    let samples = sc.duration.as_nanos() / sc.output.interval.as_nanos().max(1);
    if samples > MAX_SAMPLES {
        return Err(ScenarioError::at(
            "output.interval",
            format!(
                "{} over {} makes {samples} samples per flow (at most {MAX_SAMPLES}); use a longer interval",
                sc.output.interval, sc.duration
            ),
        ));
    }
    let directions = if sc.output.queues {
        2 * sc.links.len() as u64
    } else {
        0
    };
    let rows = (samples + 1) * (flows + directions);
    if rows > MAX_SERIES_ROWS {
        let queues = if directions > 0 {
            format!(" and {directions} link directions (output.queues)")
        } else {
            String::new()
        };
        return Err(ScenarioError::at(
            "output.interval",
            format!(
                "{} over {} with {flows} flows{queues} makes {rows} rows of time series \
                 (at most {MAX_SERIES_ROWS}); use a longer interval",
                sc.output.interval, sc.duration
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::tests::err;

    fn scenario(duration: &str, interval: &str, count: &str) -> String {
        format!(
            r#"
            duration = "{duration}"
            output = {{ interval = "{interval}" }}
            [[links]]
            between = ["a", "b"]
            rate = "10Mbit/s"
            delay = "25ms"
            [[flows]]
            from = "a"
            to = "b"
            count = {count}
            "#
        )
    }

    /// `flows[0].count = 100000000` passed validation and the run aborted on
    /// a failed allocation (signal 6).
    #[test]
    fn too_many_flows_are_refused_before_anything_is_built() {
        assert_eq!(
            err(&scenario("10s", "100ms", "100000000")),
            "flows[0].count: 100000000 makes 100000000 flows in all (at most 100000)"
        );
        // counts that overflow a 32-bit sum are summed in 64 bits
        let two = scenario("10s", "100ms", "4000000000")
            + "[[flows]]\nfrom = \"a\"\nto = \"b\"\ncount = 4000000000\n";
        assert!(err(&two).starts_with("flows[0].count: 4000000000 makes"));
        Scenario::from_toml_str(&scenario("1s", "100ms", "100000")).unwrap();
    }

    #[test]
    fn too_many_rows_of_time_series_are_refused() {
        assert_eq!(
            err(&scenario("3600s", "1ms", "20")),
            "output.interval: 1ms over 3600s with 20 flows and 2 link directions (output.queues) \
             makes 79200022 rows of time series (at most 50000000); use a longer interval"
        );
        Scenario::from_toml_str(&scenario("3600s", "10ms", "20")).unwrap();
    }

    #[test]
    fn too_many_links_are_refused() {
        let mut t = String::from("duration = \"1s\"\n");
        for i in 0..=MAX_LINKS {
            t += &format!(
                "[[links]]\nbetween = [\"n{i}\", \"n{}\"]\nrate = \"1Mbit/s\"\ndelay = \"1ms\"\n",
                i + 1
            );
        }
        t += "[[flows]]\nfrom = \"n0\"\nto = \"n1\"\n";
        assert_eq!(err(&t), "links: 10001 links (at most 10000)");
    }
}
