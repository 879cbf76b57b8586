//! A workload's transfers: their arrival times and sizes, drawn from the
//! workload's own stream of the run's seeded generator
//! ([`Stream::Workload`]), so that the same scenario and seed give the same
//! transfers and adding a workload changes no other component's draws.
//!
//! * Poisson arrivals: the gaps between arrivals are exponential with mean
//!   `1 / rate`, the first one after `start`; arrivals stop at `stop` (or
//!   the end of the run).
//! * File arrivals: one transfer a line, `time` or `time,size` (time in
//!   seconds from the workload's `start` or a duration with its unit; size
//!   in bytes or with its unit), times not decreasing. A line without a
//!   size draws one from `sizes`.
//! * Sizes, each rounded to the nearest byte, at least 1 byte and at most
//!   [`MAX_TRANSFER_BYTES`] (a Pareto of shape near 1 draws astronomical
//!   sizes now and then):
//!   `fixed`; `exponential` by inverse transform; `pareto` with shape `a`
//!   and scale `x_m = mean (a - 1) / a` (so that its mean is `mean`), drawn
//!   as `x_m / u^(1/a)` with `u` uniform in (0, 1]; `empirical` by inverse
//!   transform of the file's CDF read as piecewise linear between its
//!   points (a draw below the first point's probability is the first size),
//!   the convention of the flow-size CDFs of the data-centre transport
//!   literature (e.g. Alizadeh et al., "pFabric", SIGCOMM 2013, section
//!   5.1, whose web-search and data-mining CDFs are given as such points).
//!
//! Each draw takes the arrival first, then its size, from the same stream.

use crate::link::trace_file::{csv_rows, excerpt, read_trace_file, TraceError};
use crate::rng::{Rng, Stream};
use crate::scenario::{
    workload_name, ArrivalProcess, FlowSpec, Scenario, ScenarioError, SizeDistribution, SizeSpec,
    WorkloadSpec,
};
use wavelab_tcp::units::{parse_size, ByteSize};
use wavelab_tcp::Duration;

/// The largest transfer a size distribution draws: 1 TB, more than any
/// run moves.
pub const MAX_TRANSFER_BYTES: u64 = 1_000_000_000_000;

/// One transfer of a workload, as drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The workload's index in the scenario.
    pub workload: usize,
    /// Its arrival, from the start of the run.
    pub arrival: Duration,
    /// Payload bytes it sends.
    pub size: u64,
}

/// One point of an empirical CDF: a size and the probability of a size
/// at most it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CdfPoint {
    /// Bytes.
    pub size: f64,
    /// Probability, in [0, 1].
    pub cdf: f64,
}

/// A size distribution ready to draw from.
#[derive(Clone, Debug, PartialEq)]
pub enum Sizes {
    /// Always this many bytes.
    Fixed(u64),
    /// Exponential with this mean in bytes.
    Exponential(f64),
    /// Pareto with this scale (bytes) and shape.
    Pareto {
        /// The scale `x_m`: the smallest size.
        scale: f64,
        /// The shape `a`.
        shape: f64,
    },
    /// The piecewise-linear inverse of these points.
    Empirical(Vec<CdfPoint>),
}

impl Sizes {
    /// The distribution of a (validated) `sizes` table; an empirical CDF's
    /// file is read.
    pub fn new(spec: &SizeSpec) -> Result<Sizes, TraceError> {
        let mean = spec.mean.map_or(0.0, |m| m.0 as f64);
        Ok(match spec.distribution {
            SizeDistribution::Fixed => Sizes::Fixed(spec.size.map_or(1, |s| s.0)),
            SizeDistribution::Exponential => Sizes::Exponential(mean),
            SizeDistribution::Pareto => {
                let shape = spec.shape.unwrap_or(2.0);
                Sizes::Pareto {
                    scale: mean * (shape - 1.0) / shape,
                    shape,
                }
            }
            SizeDistribution::Empirical => {
                let file = spec.file.as_deref().unwrap_or_default();
                Sizes::Empirical(load_size_cdf(file)?)
            }
        })
    }

    /// One size in bytes (from 1 to [`MAX_TRANSFER_BYTES`]).
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        // 1 - u is in (0, 1]
        let x = match self {
            Sizes::Fixed(n) => return (*n).clamp(1, MAX_TRANSFER_BYTES),
            Sizes::Exponential(mean) => -(1.0 - rng.next_f64()).ln() * mean,
            Sizes::Pareto { scale, shape } => scale / (1.0 - rng.next_f64()).powf(1.0 / shape),
            Sizes::Empirical(points) => inverse_cdf(points, rng.next_f64()),
        };
        // saturating: a Pareto draw may be astronomically large
        (x.round() as u64).clamp(1, MAX_TRANSFER_BYTES)
    }
}

/// The size at probability `u` of the piecewise-linear CDF `points`.
fn inverse_cdf(points: &[CdfPoint], u: f64) -> f64 {
    let k = points.partition_point(|p| p.cdf < u);
    match k {
        0 => points[0].size,
        k if k == points.len() => points[k - 1].size,
        k => {
            let (a, b) = (points[k - 1], points[k]);
            if b.cdf <= a.cdf {
                return b.size;
            }
            a.size + (b.size - a.size) * (u - a.cdf) / (b.cdf - a.cdf)
        }
    }
}

/// A size in bytes, or with its unit.
fn size_field(f: &str) -> Option<u64> {
    match f.parse::<u64>() {
        Ok(b) => Some(b),
        Err(_) => parse_size(f).ok().map(|b: ByteSize| b.0),
    }
}

/// Reads an empirical size CDF: one point a line, `size,cdf` (size in
/// bytes or with its unit, cdf a probability), both not decreasing, the
/// last cdf 1; blank lines, `#` comments and a header line are skipped.
/// Errors name the file and the line.
pub fn load_size_cdf(path: &str) -> Result<Vec<CdfPoint>, TraceError> {
    let text = read_trace_file(path)?;
    parse_size_cdf(path, &text)
}

/// Parses the text of an empirical size CDF (see [`load_size_cdf`]).
pub fn parse_size_cdf(file: &str, text: &str) -> Result<Vec<CdfPoint>, TraceError> {
    let err = |line: usize, message: String| TraceError {
        file: file.to_string(),
        line,
        message,
    };
    let header = |fields: &[&str]| fields.iter().all(|f| f.parse::<f64>().is_err());
    let mut out: Vec<CdfPoint> = Vec::new();
    for (line, fields) in csv_rows(text, header) {
        if fields.len() != 2 {
            return Err(err(
                line,
                format!("has {} fields; a point is two: size,cdf", fields.len()),
            ));
        }
        let size = size_field(fields[0]).ok_or_else(|| {
            err(
                line,
                format!(
                    "{} is not a size (bytes, or with a unit such as \"10KB\")",
                    excerpt(fields[0])
                ),
            )
        })? as f64;
        let cdf = match fields[1].parse::<f64>() {
            Ok(c) if (0.0..=1.0).contains(&c) => c,
            _ => {
                return Err(err(
                    line,
                    format!("{} is not a probability from 0 to 1", excerpt(fields[1])),
                ))
            }
        };
        if let Some(last) = out.last() {
            if size < last.size || cdf < last.cdf {
                return Err(err(
                    line,
                    format!(
                        "point ({size}, {cdf}) is below the previous one ({}, {}): sizes and \
                         probabilities must not decrease",
                        last.size, last.cdf
                    ),
                ));
            }
        }
        out.push(CdfPoint { size, cdf });
    }
    match out.last() {
        None => Err(err(0, "holds no point".to_string())),
        Some(p) if p.cdf != 1.0 => Err(err(0, format!("its last probability is {}, not 1", p.cdf))),
        Some(_) => Ok(out),
    }
}

/// One line of an arrivals file: the time from the workload's start and
/// the size, if the line gives one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrivalLine {
    /// From the workload's start.
    pub at: Duration,
    /// Bytes, if given.
    pub size: Option<u64>,
}

/// Reads an arrivals file: one transfer a line, `time` or `time,size`
/// (see the module description). Errors name the file and the line.
pub fn load_arrivals(path: &str) -> Result<Vec<ArrivalLine>, TraceError> {
    let text = read_trace_file(path)?;
    parse_arrivals(path, &text)
}

/// Parses the text of an arrivals file (see [`load_arrivals`]).
pub fn parse_arrivals(file: &str, text: &str) -> Result<Vec<ArrivalLine>, TraceError> {
    let err = |line: usize, message: String| TraceError {
        file: file.to_string(),
        line,
        message,
    };
    let header = |fields: &[&str]| {
        fields
            .iter()
            .all(|f| crate::link::measured_duration(f).is_none() && size_field(f).is_none())
    };
    let mut out: Vec<ArrivalLine> = Vec::new();
    for (line, fields) in csv_rows(text, header) {
        if !(1..=2).contains(&fields.len()) {
            return Err(err(
                line,
                format!(
                    "has {} fields; a transfer is time or time,size",
                    fields.len()
                ),
            ));
        }
        let at = crate::link::measured_duration(fields[0]).ok_or_else(|| {
            err(
                line,
                format!(
                    "{} is not a time (seconds from the workload's start, or a duration with \
                     its unit such as \"20ms\")",
                    excerpt(fields[0])
                ),
            )
        })?;
        let size = match fields.get(1) {
            None => None,
            Some(f) => match size_field(f) {
                Some(b) if (1..=MAX_TRANSFER_BYTES).contains(&b) => Some(b),
                _ => {
                    return Err(err(
                        line,
                        format!("{} is not a size from 1 byte to 1 TB", excerpt(f)),
                    ))
                }
            },
        };
        if let Some(last) = out.last() {
            if at < last.at {
                return Err(err(
                    line,
                    format!("time {at} is before the previous transfer's ({})", last.at),
                ));
            }
        }
        out.push(ArrivalLine { at, size });
    }
    if out.is_empty() {
        return Err(err(0, "holds no transfer".to_string()));
    }
    Ok(out)
}

/// The transfers of workload `i` of `sc` (validated), in arrival order:
/// those that arrive from its `start` and before its `stop` (or the run's
/// end). Errors (a file changed since validation) name the field.
pub fn draw_transfers(sc: &Scenario, i: usize) -> Result<Vec<Transfer>, ScenarioError> {
    let w = &sc.workloads[i];
    let p = format!("workloads[{i}]");
    let end = w.stop.unwrap_or(sc.duration).min(sc.duration);
    let mut rng = Rng::derive(sc.seed, Stream::Workload(i as u32));
    let sizes = w
        .sizes
        .as_ref()
        .map(Sizes::new)
        .transpose()
        .map_err(|e| ScenarioError::at(format!("{p}.sizes.file"), e.to_string()))?;
    let draw_size = |rng: &mut Rng, given: Option<u64>| -> Result<u64, ScenarioError> {
        match (given, &sizes) {
            (Some(n), _) => Ok(n),
            (None, Some(s)) => Ok(s.draw(rng)),
            (None, None) => Err(ScenarioError::at(
                format!("{p}.sizes"),
                "missing: a line of the arrivals file gives no size",
            )),
        }
    };
    let mut out = Vec::new();
    match w.arrivals.process {
        ArrivalProcess::Poisson => {
            let mean = 1.0 / w.arrivals.rate.unwrap_or(1.0);
            let mut t = w.start.as_secs_f64();
            loop {
                t += -(1.0 - rng.next_f64()).ln() * mean;
                let arrival = Duration::from_secs_f64(t);
                if arrival >= end {
                    break;
                }
                let size = draw_size(&mut rng, None)?;
                out.push(Transfer {
                    workload: i,
                    arrival,
                    size,
                });
            }
        }
        ArrivalProcess::File => {
            let file = w.arrivals.file.as_deref().unwrap_or_default();
            let lines = load_arrivals(file)
                .map_err(|e| ScenarioError::at(format!("{p}.arrivals.file"), e.to_string()))?;
            for l in lines {
                let arrival = w.start + l.at;
                if arrival >= end {
                    break;
                }
                let size = draw_size(&mut rng, l.size)?;
                out.push(Transfer {
                    workload: i,
                    arrival,
                    size,
                });
            }
        }
    }
    Ok(out)
}

/// The flow of transfer `k` of workload `w` (named `<workload>/<k>`): a
/// TCP flow that opens at the arrival and sends the transfer's size.
pub fn transfer_flow(w: &WorkloadSpec, i: usize, k: usize, t: &Transfer) -> FlowSpec {
    FlowSpec {
        name: Some(format!("{}/{k}", workload_name(w, i))),
        from: w.from.clone(),
        to: w.to.clone(),
        transport: Default::default(),
        udp: None,
        ping: None,
        mptcp: None,
        cc: w.cc.clone(),
        tcp: w.tcp.clone(),
        start: t.arrival,
        stop: None,
        size: Some(ByteSize(t.size)),
        count: 1,
        path: w.path.clone(),
        log_packets: false,
        cmd: None,
        receiver_cmd: None,
    }
}

/// `sc` with the transfers of every workload appended to its flows (after
/// the scenario's own, so that theirs keep their indices and random
/// streams) and no workloads left, and the transfers in flow order: what a
/// simulator runs.
pub fn expand_workloads(sc: &Scenario) -> Result<(Scenario, Vec<Transfer>), ScenarioError> {
    let mut out = sc.clone();
    out.workloads.clear();
    let mut transfers = Vec::new();
    for (i, w) in sc.workloads.iter().enumerate() {
        for (k, t) in draw_transfers(sc, i)?.into_iter().enumerate() {
            out.flows.push(transfer_flow(w, i, k, &t));
            transfers.push(t);
        }
    }
    Ok((out, transfers))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(v: &[(f64, f64)]) -> Vec<CdfPoint> {
        v.iter()
            .map(|&(size, cdf)| CdfPoint { size, cdf })
            .collect()
    }

    #[test]
    fn the_empirical_inverse_interpolates_between_points() {
        let p = points(&[(100.0, 0.5), (1100.0, 1.0)]);
        assert_eq!(inverse_cdf(&p, 0.2), 100.0);
        assert_eq!(inverse_cdf(&p, 0.5), 100.0);
        assert_eq!(inverse_cdf(&p, 0.75), 600.0);
        assert_eq!(inverse_cdf(&p, 1.0), 1100.0);
    }

    #[test]
    fn draws_have_the_distributions_means() {
        let n = 200_000;
        let mean = |s: &Sizes| {
            let mut rng = Rng::derive(3, Stream::Workload(0));
            (0..n).map(|_| s.draw(&mut rng) as f64).sum::<f64>() / n as f64
        };
        let e = mean(&Sizes::Exponential(10_000.0));
        assert!((e / 10_000.0 - 1.0).abs() < 0.01, "{e}");
        // shape 3: finite variance, the sample mean converges
        let p = mean(&Sizes::Pareto {
            scale: 10_000.0 * 2.0 / 3.0,
            shape: 3.0,
        });
        assert!((p / 10_000.0 - 1.0).abs() < 0.02, "{p}");
        // uniform from 100 to 1100 above probability 0.5, 100 below
        let u = mean(&Sizes::Empirical(points(&[(100.0, 0.5), (1100.0, 1.0)])));
        assert!((u - 0.5 * 100.0 - 0.5 * 600.0).abs() < 5.0, "{u}");
        assert_eq!(mean(&Sizes::Fixed(0)), 1.0);
        // a tenth of these draws are above the cap: they are the cap
        let mut rng = Rng::derive(3, Stream::Workload(0));
        let wild = Sizes::Pareto {
            scale: 1e11,
            shape: 1.000_001,
        };
        let draws: Vec<u64> = (0..1000).map(|_| wild.draw(&mut rng)).collect();
        let capped = draws.iter().filter(|&&d| d == MAX_TRANSFER_BYTES).count();
        assert!((50..150).contains(&capped), "{capped}");
        assert!(draws.iter().all(|&d| d <= MAX_TRANSFER_BYTES));
    }

    #[test]
    fn cdf_files_are_checked_line_by_line() {
        let ok = parse_size_cdf("c.csv", "size,cdf\n1000,0.3\n10KB,1\n").unwrap();
        assert_eq!(
            ok[1],
            CdfPoint {
                size: 10_000.0,
                cdf: 1.0
            }
        );
        let e = parse_size_cdf("c.csv", "1000,0.5\n900,1\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("must not decrease"), "{e}");
        let e = parse_size_cdf("c.csv", "1000,0.5\n2000,0.9\n").unwrap_err();
        assert!(e.to_string().contains("last probability is 0.9"), "{e}");
        let e = parse_size_cdf("c.csv", "1000,1.5\n").unwrap_err();
        assert!(
            e.to_string().contains("\"1.5\" is not a probability"),
            "{e}"
        );
    }

    #[test]
    fn arrival_files_give_times_and_optional_sizes() {
        let a = parse_arrivals("a.csv", "time,size\n0.5\n1.5,2000\n").unwrap();
        assert_eq!(a[0].size, None);
        assert_eq!(a[1].at, Duration::from_millis(1500));
        assert_eq!(a[1].size, Some(2000));
        let e = parse_arrivals("a.csv", "2\n1\n").unwrap_err();
        assert!(e.to_string().contains("before the previous"), "{e}");
    }
}
