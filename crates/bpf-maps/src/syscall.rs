//! The two bpf(2) commands a reader of pinned maps needs, with their
//! `union bpf_attr` members laid out as in the kernel's uapi header
//! (`include/uapi/linux/bpf.h`): `BPF_OBJ_GET` and `BPF_MAP_LOOKUP_ELEM`,
//! plus `BPF_OBJ_GET_INFO_BY_FD` for a map's value size. The one module of
//! the crate that allows `unsafe`.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_OBJ_GET: libc::c_long = 7;
const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;

/// `bpf_attr` for BPF_OBJ_GET: pathname, bpf_fd, file_flags, path_fd.
#[repr(C)]
#[derive(Default)]
struct ObjGet {
    pathname: u64,
    bpf_fd: u32,
    file_flags: u32,
    path_fd: i32,
    _pad: u32,
}

/// `bpf_attr` for BPF_MAP_LOOKUP_ELEM: map_fd, key, value, flags.
#[repr(C)]
#[derive(Default)]
struct Lookup {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// `bpf_attr` for BPF_OBJ_GET_INFO_BY_FD: bpf_fd, info_len, info.
#[repr(C)]
#[derive(Default)]
struct GetInfo {
    bpf_fd: u32,
    info_len: u32,
    info: u64,
}

/// The head of `struct bpf_map_info`: type, id, key_size, value_size.
#[repr(C)]
#[derive(Default)]
struct MapInfoHead {
    map_type: u32,
    id: u32,
    key_size: u32,
    value_size: u32,
}

/// bpf(cmd, attr, sizeof attr).
fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a valid, initialised `bpf_attr` member of the size
    // passed, laid out as the kernel expects for `cmd`; every pointer it
    // carries points to memory that outlives the call and is large enough
    // for what the kernel writes (the callers' contracts).
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            (attr as *mut T).cast::<libc::c_void>(),
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Opens the BPF object pinned at `path`.
pub fn obj_get(path: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the path"))?;
    let mut attr = ObjGet {
        pathname: c.as_ptr() as u64,
        ..ObjGet::default()
    };
    let fd = bpf(BPF_OBJ_GET, &mut attr)?;
    // SAFETY: BPF_OBJ_GET returned a new file descriptor that nothing else
    // owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// The value size of map `map`.
fn value_size(map: &OwnedFd) -> io::Result<usize> {
    let mut info = MapInfoHead::default();
    let mut attr = GetInfo {
        bpf_fd: map.as_raw_fd() as u32,
        info_len: std::mem::size_of::<MapInfoHead>() as u32,
        info: (&mut info as *mut MapInfoHead) as u64,
    };
    bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr)?;
    Ok(info.value_size as usize)
}

/// The value under `key` in map `map`; `None` if there is none.
pub fn lookup(map: &OwnedFd, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
    let mut value = vec![0u8; value_size(map)?];
    let mut attr = Lookup {
        map_fd: map.as_raw_fd() as u32,
        key: key.as_ptr() as u64,
        value: value.as_mut_ptr() as u64,
        ..Lookup::default()
    };
    match bpf(BPF_MAP_LOOKUP_ELEM, &mut attr) {
        Ok(_) => Ok(Some(value)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}
