//! DSS mappings: which bytes of the connection-level data sequence space
//! each subflow carries (RFC 8684 section 3.3.1: a mapping ties a range of
//! subflow sequence space to a range of data sequence space, "Data
//! Sequence Number", "Subflow Sequence Number", "Data-Level Length").
//!
//! A subflow's stream offsets grow as the connection hands it data, so its
//! mappings are appended in subflow order and never overlap; adjacent ones
//! that continue each other in both spaces merge into one.

/// One mapping: `len` bytes from subflow offset `sub` carry data sequence
/// numbers `data..data + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// First subflow stream offset.
    pub sub: u64,
    /// First data sequence number.
    pub data: u64,
    /// Bytes.
    pub len: u64,
}

/// The mappings of one subflow, in subflow order.
#[derive(Clone, Debug, Default)]
pub struct Mappings {
    maps: Vec<Mapping>,
}

impl Mappings {
    /// The subflow offset where the next mapping starts (bytes mapped so far).
    pub fn end(&self) -> u64 {
        self.maps.last().map_or(0, |m| m.sub + m.len)
    }

    /// Maps the next `len` bytes of the subflow to data sequence numbers
    /// from `data`; returns the subflow offset they start at.
    pub fn push(&mut self, data: u64, len: u64) -> u64 {
        let sub = self.end();
        if len == 0 {
            return sub;
        }
        if let Some(last) = self.maps.last_mut() {
            if last.data + last.len == data {
                last.len += len;
                return sub;
            }
        }
        self.maps.push(Mapping { sub, data, len });
        sub
    }

    /// Calls `f(start, end)` with the data ranges subflow bytes
    /// `from..to` carry, in subflow order.
    pub fn data_ranges(&self, from: u64, to: u64, mut f: impl FnMut(u64, u64)) {
        if from >= to {
            return;
        }
        let first = self.maps.partition_point(|m| m.sub + m.len <= from);
        for m in &self.maps[first..] {
            if m.sub >= to {
                break;
            }
            let a = from.max(m.sub);
            let b = to.min(m.sub + m.len);
            f(m.data + (a - m.sub), m.data + (b - m.sub));
        }
    }

    /// How many mappings are kept (adjacent ones merged).
    pub fn len(&self) -> usize {
        self.maps.len()
    }

    /// True before anything was mapped.
    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(m: &Mappings, a: u64, b: u64) -> Vec<(u64, u64)> {
        let mut v = Vec::new();
        m.data_ranges(a, b, |s, e| v.push((s, e)));
        v
    }

    #[test]
    fn contiguous_mappings_merge_and_gaps_do_not() {
        let mut m = Mappings::default();
        assert_eq!(m.push(0, 1000), 0);
        assert_eq!(m.push(1000, 500), 1000);
        assert_eq!(m.len(), 1);
        // the data in between went to another subflow
        assert_eq!(m.push(4000, 1000), 1500);
        assert_eq!(m.len(), 2);
        assert_eq!(m.end(), 2500);
    }

    #[test]
    fn subflow_ranges_translate_across_mappings() {
        let mut m = Mappings::default();
        m.push(0, 1000);
        m.push(3000, 1000);
        m.push(9000, 100);
        assert_eq!(ranges(&m, 500, 1500), vec![(500, 1000), (3000, 3500)]);
        assert_eq!(ranges(&m, 1000, 2100), vec![(3000, 4000), (9000, 9100)]);
        assert_eq!(ranges(&m, 2050, 5000), vec![(9050, 9100)]);
        assert!(ranges(&m, 700, 700).is_empty());
    }
}
