//! The resources pass: the sizes a scenario asks for, checked against the
//! bounds of [`crate::limits`] before anything is allocated.

use crate::limits::{MAX_FLOWS, MAX_LINKS, MAX_SAMPLES, MAX_SERIES_ROWS};
use crate::scenario::{Scenario, ScenarioError};

/// Checks the sizes a scenario asks for, before any of it is allocated.
pub(super) fn check(sc: &Scenario) -> Result<(), ScenarioError> {
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
    use crate::limits::MAX_LINKS;
    use crate::scenario::tests::err;
    use crate::scenario::Scenario;

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
