//! The workloads pass: each workload's nodes, TCP settings, times and route
//! (checked as those of a flow), its arrival process and size distribution
//! (the fields each needs and no other, in range, files read: errors name
//! the file and the line), its name, and how many transfers it can make.

use super::flows::check_flow;
use crate::limits::MAX_FLOWS;
use crate::scenario::{
    flow_name, workload_name, ArrivalProcess, Scenario, ScenarioError, SizeDistribution, SizeSpec,
    WorkloadSpec,
};
use crate::topology::Topology;
use crate::workload::{load_arrivals, load_size_cdf, transfer_flow, Transfer, MAX_TRANSFER_BYTES};

/// Checks every workload of `sc` on the graph of its links.
pub(super) fn check(sc: &Scenario, topo: &Topology) -> Result<(), ScenarioError> {
    let nodes = sc.node_names();
    let flows: u64 = sc.flows.iter().map(|f| u64::from(f.count)).sum();
    let mut names: Vec<String> = Vec::new();
    for (i, w) in sc.workloads.iter().enumerate() {
        let p = format!("workloads[{i}]");
        // its transfers are flows with its nodes, TCP, start and route
        let first = Transfer {
            workload: i,
            arrival: w.start,
            size: 1,
        };
        check_flow(sc, topo, &nodes, &p, &transfer_flow(w, i, 0, &first))?;
        if let Some(stop) = w.stop {
            if stop <= w.start {
                return Err(ScenarioError::at(
                    format!("{p}.stop"),
                    format!("{stop} is not after start ({})", w.start),
                ));
            }
        }
        let name = workload_name(w, i);
        let prefix = format!("{name}/");
        let taken = sc
            .flows
            .iter()
            .enumerate()
            .any(|(j, f)| (0..f.count).any(|k| flow_name(f, j, k).starts_with(&prefix)));
        if taken || names.contains(&name) {
            return Err(ScenarioError::at(
                format!("{p}.name"),
                format!(
                    "\"{name}\" is taken: its transfers are the flows \"{name}/0\", \
                     \"{name}/1\", ..., and another flow or workload has that name"
                ),
            ));
        }
        names.push(name);
        let file_lines = check_arrivals(sc, &p, w, flows)?;
        match (&w.sizes, file_lines) {
            (Some(s), _) => check_sizes(&format!("{p}.sizes"), s)?,
            (None, Some(true)) => {}
            (None, _) => {
                return Err(ScenarioError::at(
                    format!("{p}.sizes"),
                    "missing: a workload says how large its transfers are, e.g. \
                     sizes = { distribution = \"fixed\", size = \"100kB\" }",
                ))
            }
        }
    }
    Ok(())
}

/// Checks the `arrivals` table of workload `w` (at `p`); `flows` is the
/// scenario's own flows. For a file, whether every line gives a size.
fn check_arrivals(
    sc: &Scenario,
    p: &str,
    w: &WorkloadSpec,
    flows: u64,
) -> Result<Option<bool>, ScenarioError> {
    let at = |field: &str| format!("{p}.arrivals.{field}");
    let a = &w.arrivals;
    match a.process {
        ArrivalProcess::Poisson => {
            if a.file.is_some() {
                return Err(ScenarioError::at(
                    at("file"),
                    "is for process = \"file\"; a Poisson process draws its times from `rate`",
                ));
            }
            let Some(rate) = a.rate else {
                return Err(ScenarioError::at(
                    at("rate"),
                    "missing: a Poisson process needs a rate (transfers a second), e.g. rate = 10",
                ));
            };
            if !(rate.is_finite() && rate > 0.0) {
                return Err(ScenarioError::at(
                    at("rate"),
                    format!("{rate} is not a rate above zero (transfers a second)"),
                ));
            }
            // the mean count must leave room under the flows limit
            let window = w.stop.unwrap_or(sc.duration).min(sc.duration);
            let window = window.saturating_sub(w.start).as_secs_f64();
            let expected = rate * window;
            if expected + flows as f64 > MAX_FLOWS as f64 / 2.0 {
                return Err(ScenarioError::at(
                    at("rate"),
                    format!(
                        "{rate} a second over {window} s makes about {expected:.0} transfers \
                         (at most {} flows in all, with a margin for the draw)",
                        MAX_FLOWS / 2
                    ),
                ));
            }
            Ok(None)
        }
        ArrivalProcess::File => {
            if a.rate.is_some() {
                return Err(ScenarioError::at(
                    at("rate"),
                    "is for process = \"poisson\"; a file gives the times",
                ));
            }
            let Some(file) = &a.file else {
                return Err(ScenarioError::at(
                    at("file"),
                    "missing: process = \"file\" reads the arrival times from a CSV file",
                ));
            };
            let lines =
                load_arrivals(file).map_err(|e| ScenarioError::at(at("file"), e.to_string()))?;
            if lines.len() as u64 + flows > MAX_FLOWS {
                return Err(ScenarioError::at(
                    at("file"),
                    format!(
                        "{} transfers with the scenario's {flows} flows make more than {MAX_FLOWS} flows",
                        lines.len()
                    ),
                ));
            }
            Ok(Some(lines.iter().all(|l| l.size.is_some())))
        }
    }
}

/// Checks a `sizes` table at `p` (e.g. `workloads[0].sizes`).
fn check_sizes(p: &str, s: &SizeSpec) -> Result<(), ScenarioError> {
    let d = s.distribution;
    let given = [
        ("size", s.size.is_some()),
        ("mean", s.mean.is_some()),
        ("shape", s.shape.is_some()),
        ("file", s.file.is_some()),
    ];
    let reads: &[(&str, bool)] = match d {
        SizeDistribution::Fixed => &[("size", true)],
        SizeDistribution::Exponential => &[("mean", true)],
        SizeDistribution::Pareto => &[("mean", true), ("shape", true)],
        SizeDistribution::Empirical => &[("file", true)],
    };
    let kind = format!("distribution \"{}\"", d.name());
    super::check_fields(p, &kind, &given, reads)?;
    for (field, v) in [("size", s.size), ("mean", s.mean)] {
        if v.is_some_and(|b| b.0 == 0) {
            return Err(ScenarioError::at(
                format!("{p}.{field}"),
                "must be above zero",
            ));
        }
        if let Some(b) = v.filter(|b| b.0 > MAX_TRANSFER_BYTES) {
            return Err(ScenarioError::at(
                format!("{p}.{field}"),
                format!("{b} is above 1 TB, the largest transfer"),
            ));
        }
    }
    if let Some(shape) = s.shape {
        if !(shape.is_finite() && shape > 1.0) {
            return Err(ScenarioError::at(
                format!("{p}.shape"),
                format!("{shape} is not above 1 (a Pareto of shape 1 or less has no mean)"),
            ));
        }
    }
    if let Some(file) = &s.file {
        load_size_cdf(file).map_err(|e| ScenarioError::at(format!("{p}.file"), e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::scenario::tests::err;
    use crate::scenario::Scenario;

    fn workload(fields: &str) -> String {
        format!(
            r#"
            duration = "10s"
            [[links]]
            between = ["a", "b"]
            rate = "10Mbit/s"
            delay = "25ms"
            [[workloads]]
            from = "a"
            to = "b"
            {fields}
            "#
        )
    }

    const POISSON: &str = r#"arrivals = { process = "poisson", rate = 5 }"#;

    #[test]
    fn errors_name_the_field_and_value() {
        let sizes = |s: &str| workload(&format!("{POISSON}\nsizes = {s}"));
        let cases = [
            (
                sizes(r#"{ distribution = "pareto", mean = "10kB", shape = 0.8 }"#),
                "workloads[0].sizes.shape: 0.8 is not above 1 (a Pareto of shape 1 or less has no mean)",
            ),
            (
                sizes(r#"{ distribution = "pareto", mean = "10kB" }"#),
                "workloads[0].sizes.shape: missing (distribution \"pareto\" needs it)",
            ),
            (
                sizes(r#"{ distribution = "fixed", size = "1kB", mean = "2kB" }"#),
                "workloads[0].sizes.mean: distribution \"fixed\" does not use it",
            ),
            (
                sizes(r#"{ distribution = "exponential", mean = "0B" }"#),
                "workloads[0].sizes.mean: must be above zero",
            ),
            (
                sizes(r#"{ distribution = "fixed", size = "2000GB" }"#),
                "workloads[0].sizes.size: 2000GB is above 1 TB, the largest transfer",
            ),
            (
                sizes(r#"{ distribution = "lognormal", mean = "1kB" }"#),
                "workloads[0].sizes.distribution: ",
            ),
            (
                sizes(r#"{ distribution = "empirical", file = "/nonexistent/cdf.csv" }"#),
                "workloads[0].sizes.file: /nonexistent/cdf.csv",
            ),
            (
                workload(r#"arrivals = { process = "poisson", rate = -2 }"#),
                "workloads[0].arrivals.rate: -2 is not a rate above zero (transfers a second)",
            ),
            (
                workload(r#"arrivals = { process = "poisson" }"#),
                "workloads[0].arrivals.rate: missing: a Poisson process needs a rate",
            ),
            (
                workload(r#"arrivals = { process = "poisson", rate = 1e6 }"#),
                "workloads[0].arrivals.rate: 1000000 a second over 10 s makes about 10000000 transfers",
            ),
            (
                workload(r#"arrivals = { process = "file" }"#),
                "workloads[0].arrivals.file: missing: process = \"file\" reads",
            ),
            (
                workload(POISSON),
                "workloads[0].sizes: missing: a workload says how large its transfers are",
            ),
            (
                workload(&format!(
                    "{POISSON}\nsizes = {{ distribution = \"fixed\", size = \"1kB\" }}\nstart = \"5s\"\nstop = \"2s\""
                )),
                "workloads[0].stop: 2s is not after start (5s)",
            ),
        ];
        for (text, want) in cases {
            let e = err(&text);
            assert!(e.starts_with(want), "{e}\nwanted {want}");
        }
    }

    #[test]
    fn a_workload_named_like_a_flow_is_refused_and_a_good_one_round_trips() {
        let good = workload(&format!(
            "name = \"web\"\n{POISSON}\nsizes = {{ distribution = \"fixed\", size = \"1kB\" }}"
        ));
        let s = Scenario::from_toml_str(&good).unwrap();
        assert_eq!(Scenario::from_json_str(&s.to_json()).unwrap(), s);
        let clash = format!("{good}\n[[flows]]\nname = \"web/0\"\nfrom = \"a\"\nto = \"b\"");
        assert!(
            err(&clash).starts_with("workloads[0].name: \"web\" is taken"),
            "{}",
            err(&clash)
        );
    }
}
