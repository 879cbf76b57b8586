//! Your own congestion controls, compiled into wavelab.
//!
//! Each algorithm is a file here implementing
//! [`wavelab_tcp::cc::CongestionControl`], registered under its name in
//! [`register_all`], which the Python package calls when it loads: after
//! `pip install .` a scenario can say `cc = "vegas"`. To add one, copy
//! `vegas.rs`, rename it, add a `mod` line and a `register` line below, and
//! rebuild (docs/custom-cc.md walks through it).

pub mod vegas;

use std::sync::OnceLock;
use wavelab_tcp::cc::registry::register;

/// Registers every algorithm of this crate, once (later calls return the
/// first call's outcome). An error names the algorithm whose name clashes.
pub fn register_all() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        register::<vegas::VegasParams>("vegas", vegas::build).map_err(|e| format!("vegas: {e}"))?;
        // register::<mine::MineParams>("mine", mine::build).map_err(|e| format!("mine: {e}"))?;
        Ok(())
    })
    .clone()
}
