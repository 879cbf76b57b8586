//! The skeleton of src/bpf/wave.bpf.c: loading with parameters, registering
//! as a congestion control and pinning (the pinned maps are read back by
//! `wavelab-bpf-maps`, which the emulator shares).

use crate::{Error, Params};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::MapHandle;
use std::mem::MaybeUninit;
use std::path::Path;

// The generated skeleton: it manages raw libbpf objects with `unsafe` blocks
// of its own, which the crate's lint level allows.
#[allow(missing_docs, clippy::all, unused_imports, unsafe_op_in_unsafe_fn)]
mod skel {
    include!(concat!(env!("OUT_DIR"), "/wave.skel.rs"));
}

fn err(what: &str) -> impl Fn(libbpf_rs::Error) -> Error + '_ {
    move |e| Error(format!("{what}: {e:#}"))
}

/// Opens, parameterises, loads, registers and pins the program.
pub fn load(p: &Params, dir: &Path) -> Result<(), Error> {
    let mut object = MaybeUninit::uninit();
    let mut open = skel::WaveSkelBuilder::default()
        .open(&mut object)
        .map_err(err("opening the BPF object"))?;
    let ro = open
        .maps
        .rodata_data
        .as_deref_mut()
        .ok_or_else(|| Error("the BPF object has no read-only data".into()))?;
    ro.burst0 = p.burst;
    ro.min_burst = p.min_burst;
    ro.tx_time0_us = p.tx_time_us;
    ro.min_tx_time_us = p.min_tx_time_us;
    ro.beta_us = p.beta_us;
    ro.dispersion_scaling = p.dispersion_scaling as u32;
    ro.dispersion_filter = p.dispersion_filter;
    ro.first_release = p.first_release as u32;
    let mut skel = open.load().map_err(err(
        "loading the BPF program (the kernel's verifier log is above)",
    ))?;
    let mut link = skel
        .maps
        .wave
        .attach_struct_ops()
        .map_err(err("registering the congestion control"))?;
    link.pin(dir.join("link"))
        .map_err(err("pinning the registration"))?;
    let pin = |map: &libbpf_rs::MapMut<'_>, name: &str| {
        let mut m = MapHandle::try_from(map).map_err(err("duplicating a map"))?;
        m.pin(dir.join(name)).map_err(err("pinning a map"))
    };
    pin(&skel.maps.wave_counters, "counters")?;
    pin(&skel.maps.wave_sk, "sockets")?;
    pin(&skel.maps.rodata, "params")?;
    Ok(())
}
