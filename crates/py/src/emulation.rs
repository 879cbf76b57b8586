//! The emulator's PyO3 glue: `Emulation` (a run on the wall clock, started
//! and then waited for in slices so that Python shows progress and hears
//! Ctrl-C), and the functions around it (validation, the machine check,
//! the clean-up of what a killed run left).

use crate::{capture_results, os_error, results_to_py, table_to_py, ScenarioError};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use wavelab_net::{BpfWave, Emulation as Run, EmulationResults, Kernel, Options, Plan};
use wavelab_tcp::Duration;

/// The kernel as seen by validation: the running kernel's congestion
/// controls, or (for results read back on another machine) any name.
fn kernel(check: bool) -> PyResult<Kernel> {
    if check {
        Kernel::read().map_err(|e| {
            PyOSError::new_err(format!(
                "cannot read /proc/sys/net/ipv4/tcp_available_congestion_control: {e}"
            ))
        })
    } else {
        Ok(Kernel {
            congestion_controls: Vec::new(),
            wave: BpfWave::Unchecked,
            mptcp: true,
        })
    }
}

fn plan(json: &str, check_kernel: bool) -> PyResult<Plan> {
    let mut k = kernel(check_kernel)?;
    if !check_kernel {
        // every name the scenario uses is taken as the kernel's
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(json) {
            for f in v["flows"].as_array().into_iter().flatten() {
                let name = match &f["cc"] {
                    serde_json::Value::String(s) => Some(s.clone()),
                    serde_json::Value::Object(m) => m
                        .get("algorithm")
                        .and_then(|a| a.as_str())
                        .map(String::from),
                    _ => None,
                };
                k.congestion_controls.extend(name);
            }
        }
    }
    Plan::new(json, &k).map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// Validates a scenario for emulation (kernel congestion controls, what the
/// emulator cannot run); returns it normalised as JSON. With `check_kernel`
/// false, any algorithm name passes (for results read on another machine).
#[pyfunction]
#[pyo3(signature = (json, check_kernel = true))]
pub fn normalize_emulation(json: &str, check_kernel: bool) -> PyResult<String> {
    Ok(plan(json, check_kernel)?.normalized_json())
}

/// `None` if this process can run an emulation, else what is missing.
#[pyfunction]
pub fn emulation_unavailable() -> Option<String> {
    wavelab_net::preflight::check(false).err()
}

/// The kernel's congestion controls.
#[pyfunction]
pub fn kernel_congestion_controls() -> PyResult<Vec<String>> {
    Ok(kernel(true)?.congestion_controls)
}

/// Kills the processes earlier runs left (see `wavelab_net::cleanup`);
/// returns `(pid, command line, owner pid)` of each.
#[pyfunction]
#[pyo3(signature = (all = false))]
pub fn emulation_cleanup(all: bool) -> Vec<(i32, String, i32)> {
    wavelab_net::cleanup::cleanup(all)
        .into_iter()
        .map(|l| (l.pid, l.cmdline, l.owner))
        .collect()
}

/// Makes this process receive SIGTERM when its parent dies, so that a run
/// whose parent is killed stops (and writes what it has) instead of
/// running on unseen.
#[pyfunction]
pub fn terminate_with_parent() -> PyResult<()> {
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM)
        .map_err(|e| PyOSError::new_err(format!("prctl(PR_SET_PDEATHSIG): {e}")))
}

fn micros(us: f64, what: &str) -> PyResult<Duration> {
    if !us.is_finite() || us < 0.0 {
        return Err(PyValueError::new_err(format!(
            "{what}: {us} is not a duration in microseconds"
        )));
    }
    Ok(Duration::from_nanos((us * 1e3).round() as u64))
}

/// An emulation: a scenario on real packets between network namespaces.
#[pyclass(module = "wavelab._native", unsendable)]
pub struct Emulation {
    run: Option<Run>,
    results: Option<EmulationResults>,
    end: f64,
}

#[pymethods]
impl Emulation {
    /// Validates the scenario (JSON) against the running kernel; nothing is
    /// created until `start`.
    #[new]
    #[pyo3(signature = (json, realtime = true, spin_us = 50.0, lateness_bound_us = 500.0, logs = None))]
    fn new(
        json: &str,
        realtime: bool,
        spin_us: f64,
        lateness_bound_us: f64,
        logs: Option<PathBuf>,
    ) -> PyResult<Self> {
        let options = Options {
            realtime,
            spin: micros(spin_us, "spin")?,
            lateness_bound: micros(lateness_bound_us, "lateness bound")?,
            logs,
            ..Options::default()
        };
        let run = Run::new(plan(json, true)?, options);
        Ok(Emulation {
            end: run.end().as_secs_f64(),
            run: Some(run),
            results: None,
        })
    }

    /// Captures `target` into the pcap file `path` (before `start`).
    fn add_capture(&mut self, target: &str, path: &str) -> PyResult<()> {
        let run = self.run_mut()?;
        let file = std::fs::File::create(path).map_err(|e| os_error(&e, path))?;
        let out = std::io::BufWriter::with_capacity(1 << 20, file);
        run.add_capture(target, Box::new(out))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Creates the namespaces and devices and starts the run; raises
    /// `OSError` naming what the machine lacks.
    fn start(&mut self, py: Python<'_>) -> PyResult<()> {
        let run = self.run_mut()?;
        py.detach(|| run.start())
            .map_err(|e| PyOSError::new_err(e.to_string()))
    }

    /// Seconds the run reached.
    #[getter]
    fn now(&self) -> f64 {
        self.run
            .as_ref()
            .map_or(self.end, |r| r.now().as_secs_f64())
    }

    /// Seconds at which the run ends.
    #[getter]
    fn end(&self) -> f64 {
        self.end
    }

    /// Waits up to `timeout` seconds (without the GIL); true once the run is over.
    fn wait(&self, py: Python<'_>, timeout: f64) -> bool {
        let Some(run) = &self.run else { return true };
        let done = run.done_flag();
        let timeout = std::time::Duration::from_secs_f64(timeout.clamp(0.0, 1e6));
        let until = std::time::Instant::now() + timeout;
        py.detach(|| {
            while !done.load(Ordering::Acquire) && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        run.is_done()
    }

    /// Asks the run to stop now; its results so far are kept.
    fn stop(&self) {
        if let Some(r) = &self.run {
            r.stop();
        }
    }

    /// Waits for the end and gathers the results: a dict of tables (as
    /// `Simulation.results`, plus `releases`), the run's figures and the
    /// emulation's.
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
        let run = self
            .run
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the emulation is already finished"))?;
        let r = py
            .detach(|| run.finish())
            .map_err(PyRuntimeError::new_err)?;
        let res = &r.results;
        let tables = results_to_py(py, res)?;
        tables.set_item("releases", table_to_py(py, &r.releases)?)?;
        tables.set_item("bursts", table_to_py(py, &r.bursts)?)?;
        let run_stats = PyDict::new(py);
        run_stats.set_item("simulated", res.run.simulated.as_secs_f64())?;
        run_stats.set_item("events", res.run.events)?;
        run_stats.set_item("packet_hops", res.run.packet_hops)?;
        run_stats.set_item("peak_packets", res.run.peak_packets)?;
        let s = &r.stats;
        let l = &s.lateness;
        let e = PyDict::new(py);
        e.set_item("wall_seconds", s.wall_seconds)?;
        e.set_item("emulated", s.emulated.as_secs_f64())?;
        e.set_item("releases", l.count)?;
        e.set_item("lateness_p50", l.p50.as_secs_f64())?;
        e.set_item("lateness_p99", l.p99.as_secs_f64())?;
        e.set_item("lateness_p999", l.p999.as_secs_f64())?;
        e.set_item("lateness_max", l.max.as_secs_f64())?;
        e.set_item("lateness_mean", l.mean_ns * 1e-9)?;
        e.set_item("lateness_bound", s.lateness_bound.as_secs_f64())?;
        e.set_item("flagged", s.flagged)?;
        e.set_item("packets_read", s.read)?;
        e.set_item("stray_packets", s.stray)?;
        e.set_item("read_errors", s.read_errors)?;
        e.set_item("write_errors", s.write_errors)?;
        match &s.realtime {
            Ok(p) => e.set_item("realtime", *p)?,
            Err(why) => {
                e.set_item("realtime", py.None())?;
                e.set_item("realtime_refused", why)?;
            }
        }
        e.set_item("realtime_demotions", s.realtime_demotions)?;
        e.set_item("notes", s.notes.clone())?;
        e.set_item("errors", s.errors.clone())?;
        e.set_item("kernel", &s.kernel)?;
        e.set_item("loadavg", &s.loadavg)?;
        self.results = Some(r);
        Ok((tables, run_stats, e))
    }

    /// Flushes the captures (after `finish`); one dict per capture as
    /// `Simulation.finish_captures` returns.
    fn finish_captures<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let r = self
            .results
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("finish the emulation first"))?;
        let done = r
            .captures
            .iter_mut()
            .map(|c| (c.label().to_string(), c.finish()));
        capture_results(py, done)
    }
}

impl Emulation {
    fn run_mut(&mut self) -> PyResult<&mut Run> {
        self.run
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the emulation is already finished"))
    }
}
