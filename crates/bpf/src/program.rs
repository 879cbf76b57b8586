//! The skeleton of src/bpf/wave.bpf.c: loading with parameters, registering
//! as a congestion control, pinning, and reading the pinned maps back.

use crate::{Counters, Error, Params, WaveSocket};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, MapHandle};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd};
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

fn pinned(dir: &Path, name: &str) -> Result<Option<MapHandle>, Error> {
    let path = dir.join(name);
    if !path.exists() {
        return Ok(None);
    }
    MapHandle::from_pinned_path(&path)
        .map(Some)
        .map_err(err("opening a pinned map"))
}

fn value(map: &MapHandle, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
    map.lookup(key, MapFlags::ANY)
        .map_err(err("reading a pinned map"))
}

/// The parameters in the pinned read-only data.
pub fn pinned_params(dir: &Path) -> Result<Option<Params>, Error> {
    let Some(map) = pinned(dir, "params")? else {
        return Ok(None);
    };
    let Some(b) = value(&map, &0u32.to_ne_bytes())? else {
        return Ok(None);
    };
    let u = |i: usize| {
        b.get(4 * i..4 * i + 4)
            .map(|s| u32::from_ne_bytes(s.try_into().expect("4 bytes")))
    };
    let (
        Some(burst),
        Some(min_burst),
        Some(tx),
        Some(min_tx),
        Some(beta),
        Some(scale),
        Some(filter),
        Some(first),
    ) = (u(0), u(1), u(2), u(3), u(4), u(5), u(6), u(7))
    else {
        return Ok(None);
    };
    Ok(Some(Params {
        burst,
        min_burst,
        tx_time_us: tx,
        min_tx_time_us: min_tx,
        beta_us: beta,
        dispersion_scaling: scale != 0,
        dispersion_filter: filter,
        first_release: first != 0,
    }))
}

/// The pinned counters.
pub fn pinned_counters(dir: &Path) -> Result<Option<Counters>, Error> {
    let Some(map) = pinned(dir, "counters")? else {
        return Ok(None);
    };
    Ok(value(&map, &0u32.to_ne_bytes())?.and_then(|b| Counters::from_bytes(&b)))
}

/// One socket's state: the socket storage map is keyed by a socket's file
/// descriptor in the calling process.
pub fn socket_state(dir: &Path, fd: BorrowedFd<'_>) -> Result<Option<WaveSocket>, Error> {
    let Some(map) = pinned(dir, "sockets")? else {
        return Err(Error(
            "TCP Wave is not loaded by wavelab-bpf (no pinned socket storage)".into(),
        ));
    };
    let key = fd.as_raw_fd().to_ne_bytes();
    match map.lookup(&key, MapFlags::ANY) {
        Ok(v) => Ok(v.and_then(|b| WaveSocket::from_bytes(&b))),
        // a socket that never selected wave has no storage
        Err(e) if e.kind() == libbpf_rs::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(err("reading a socket's state")(e)),
    }
}
