//! The resources pass: the sizes a scenario asks for, checked against the
//! bounds of [`crate::limits`] before anything is allocated; and, once the
//! links are checked, the link-layer reports they can make
//! ([`check_reports`]).

use crate::limits::{
    FRAME_HEADER_BYTES, MAX_FLOWS, MAX_LINKS, MAX_NOTIFICATIONS, MAX_SAMPLES, MAX_SERIES_ROWS,
};
use crate::link::{CsvTrace, Quantity, ReportWhen};
use crate::scenario::{Scenario, ScenarioError};
use wavelab_tcp::Rate;

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

/// The rows of time series a run records at its samples (as [`check`]
/// counts them).
fn series_rows(sc: &Scenario) -> u64 {
    let samples = sc.duration.as_nanos() / sc.output.interval.as_nanos().max(1);
    let flows: u64 = sc.flows.iter().map(|f| u64::from(f.count)).sum();
    let directions = if sc.output.queues {
        2 * sc.links.len() as u64
    } else {
        0
    };
    (samples + 1) * (flows + directions)
}

/// The highest rate link `i`'s direction `k` (0: forward) ever has: its
/// own or the link's, its schedule's and handovers', its rate trace's.
fn highest_rate(sc: &Scenario, i: usize, k: usize) -> u64 {
    let l = &sc.links[i];
    let d = if k == 0 { &l.forward } else { &l.reverse };
    let scheduled = l
        .schedule
        .iter()
        .filter(|e| e.direction.covers(k))
        .filter_map(|e| e.rate);
    let handed = l.handovers.iter().filter_map(|h| h.rate);
    let leo = l
        .leo
        .map(|m| if k == 0 { m.downlink.max } else { m.uplink.max });
    let traced = d
        .rate_trace
        .as_ref()
        .and_then(|f| CsvTrace::load(f, Quantity::Rate).ok())
        .map(|t| t.points().map(|(_, b)| b as u64).max().unwrap_or(0));
    std::iter::once(d.rate.unwrap_or(l.rate))
        .chain(scheduled)
        .chain(handed)
        .chain(leo)
        .map(Rate::as_bps)
        .chain(traced)
        .max()
        .unwrap_or(0)
}

/// Checks the link-layer reports the run can make against
/// [`MAX_NOTIFICATIONS`] (and, with `output.notification_samples`, the rows
/// of time series they add against [`MAX_SERIES_ROWS`]), before anything
/// runs. A direction with ARQ and `report = "all"` reports every data frame
/// it delivers, and it delivers at most its highest rate times the run's
/// duration over the smallest full-sized frame of the scenario's flows
/// (their smallest MSS plus [`FRAME_HEADER_BYTES`]). Reports of retried
/// frames and of frames given up depend on the losses: the simulation stops
/// the run when the notifications reach the limit.
pub(super) fn check_reports(sc: &Scenario) -> Result<(), ScenarioError> {
    let Some(mss) = sc.flows.iter().map(|f| u64::from(f.tcp.mss)).min() else {
        return Ok(());
    };
    let frame = mss + FRAME_HEADER_BYTES;
    let mut reports: u64 = 0;
    for (i, l) in sc.links.iter().enumerate() {
        for (k, (side, d)) in [("forward", &l.forward), ("reverse", &l.reverse)]
            .into_iter()
            .enumerate()
        {
            let (arq, field) = match (&d.arq, &l.arq) {
                (Some(a), _) => (a, format!("links[{i}].{side}.arq.report")),
                (None, Some(a)) => (a, format!("links[{i}].arq.report")),
                (None, None) => continue,
            };
            if arq.report != ReportWhen::All {
                continue;
            }
            let rate = highest_rate(sc, i, k);
            let bits = u128::from(rate) * u128::from(sc.duration.as_nanos()) / 1_000_000_000;
            let frames = u64::try_from(bits / u128::from(8 * frame)).unwrap_or(u64::MAX);
            reports = reports.saturating_add(frames);
            if reports > MAX_NOTIFICATIONS {
                return Err(ScenarioError::at(
                    field,
                    format!(
                        "\"all\" on the {side} direction (up to {} for {}, frames of at least \
                         {frame} B) makes up to {frames} link-layer reports{} (at most \
                         {MAX_NOTIFICATIONS} notifications); report \"retried\" frames only, or \
                         run a shorter time",
                        Rate::from_bps(rate),
                        sc.duration,
                        if frames == reports {
                            String::new()
                        } else {
                            format!(", {reports} with the directions before it")
                        },
                    ),
                ));
            }
        }
    }
    if sc.output.notification_samples {
        let rows = series_rows(sc).saturating_add(reports);
        if rows > MAX_SERIES_ROWS {
            return Err(ScenarioError::at(
                "output.notification_samples",
                format!(
                    "a row of time series at each of up to {reports} link-layer reports makes \
                     {rows} rows of time series (at most {MAX_SERIES_ROWS}); turn it off or \
                     report \"retried\" frames only"
                ),
            ));
        }
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

    fn arq_hop(rate: &str, duration: &str, report: &str, samples: bool) -> String {
        format!(
            r#"
            duration = "{duration}"
            output = {{ interval = "1s", notification_samples = {samples} }}
            [[links]]
            between = ["a", "b"]
            rate = "{rate}"
            delay = "1ms"
            arq = {{ retries = 7, report = "{report}" }}
            [[flows]]
            from = "a"
            to = "b"
            "#
        )
    }

    /// `report = "all"` on a 1 Gbit/s hop for 600 s: 50 million reports,
    /// which grew the notifications table until a memory cap aborted the
    /// process with nothing written.
    #[test]
    fn reports_of_every_frame_are_counted_before_the_run() {
        assert_eq!(
            err(&arq_hop("1Gbit/s", "600s", "all", false)),
            "links[0].arq.report: \"all\" on the forward direction (up to 1Gbit/s for 600s, \
             frames of at least 1500 B) makes up to 50000000 link-layer reports (at most \
             20000000 notifications); report \"retried\" frames only, or run a shorter time"
        );
        // both directions count, the highest rate a direction ever has
        let two = arq_hop("100Mbit/s", "1000s", "all", false).replace(
            "arq = {",
            "schedule = [{ at = \"10s\", rate = \"150Mbit/s\" }]\n            arq = {",
        );
        let e = err(&two);
        assert!(
            e.starts_with("links[0].arq.report: \"all\" on the reverse direction (up to 150Mbit/s")
                && e.contains(
                    "makes up to 12500000 link-layer reports, 25000000 with the directions"
                ),
            "{e}"
        );
        // what a lossy WLAN study asks for passes; "retried" is bounded while
        // the run goes
        Scenario::from_toml_str(&arq_hop("2Mbit/s", "600s", "all", false)).unwrap();
        Scenario::from_toml_str(&arq_hop("1Gbit/s", "600s", "retried", false)).unwrap();
    }

    #[test]
    fn a_row_of_time_series_per_report_is_counted_too() {
        // 40 flows sampled every 1 ms for 1000 s: 42 million rows, and
        // 12.5 million reports on the forward direction's ARQ
        let text = |samples: bool| {
            format!(
                r#"
                duration = "1000s"
                output = {{ interval = "1ms", notification_samples = {samples} }}
                [[links]]
                between = ["a", "b"]
                rate = "150Mbit/s"
                delay = "1ms"
                forward = {{ arq = {{ retries = 7, report = "all" }} }}
                [[flows]]
                from = "a"
                to = "b"
                count = 40
                "#
            )
        };
        assert_eq!(
            err(&text(true)),
            "output.notification_samples: a row of time series at each of up to 12500000 \
             link-layer reports makes 54500042 rows of time series (at most 50000000); turn it \
             off or report \"retried\" frames only"
        );
        Scenario::from_toml_str(&text(false)).unwrap();
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
