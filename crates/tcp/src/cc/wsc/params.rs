//! WSC-TCP's parameters: one switch per mechanism of the thesis (Srinivasan 2016,
//! sections 3.1-3.4), so that each part's contribution can be measured
//! alone, and the values the thesis leaves open.
//!
//! In a scenario every field is optional:
//! `cc = { algorithm = "wsc-tcp", best_start = false, cluster_k = 3 }`.

use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// When a duplicate-ACK threshold raised for a segment in link-layer retry
/// returns to the configured one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DupThreshRestore {
    /// When the cumulative ACK passes the late segment: the duplicate ACKs
    /// that the segments which overtook it caused are still on their way
    /// back when the link reports its delivery (the project's reading; the
    /// default).
    #[default]
    Ack,
    /// When the link reports the late segment delivered, as the thesis'
    /// pseudo-code does (`dup_ack = DEFAULT_DUP_ACK + (L_ack_max - indx)`
    /// with nothing pending).
    Link,
}

/// Parameters of WSC-TCP (all four mechanisms on by default).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WscParams {
    /// Section 3.1: subtract n × LL_RTO from the RTT sample of an ACK that
    /// covers a segment which needed n link-layer retransmissions.
    pub corrected_rtt: bool,
    /// Section 3.2: raise the duplicate-ACK threshold by the segments the
    /// link delivered past one still in link-layer retry.
    pub dynamic_dupthresh: bool,
    /// When a raised threshold returns to the configured one.
    pub dupthresh_restore: DupThreshRestore,
    /// A segment overtaken at the link and not reported for this many link
    /// RTOs (LL_RTO) no longer counts as in retry (the link has presumably
    /// given it up; 8 = 802.11's retry limit of 7 plus the first attempt).
    pub pending_limit: u32,
    /// Section 3.3: start from a window learned from past sessions on the
    /// same path in the same time-of-day bucket.
    pub best_start: bool,
    /// Width of a time-of-day bucket (1 h).
    pub bucket: Duration,
    /// The time of day at simulated time zero (0 s: midnight).
    pub clock_at_start: Duration,
    /// Past sessions of the bucket taken into account, the most recent
    /// first (8).
    pub history: u32,
    /// The largest best-start window in segments (none by default: the
    /// receive window still limits).
    pub best_start_max: Option<u32>,
    /// Section 3.4: withhold RTT samples that fall in a small cluster of the
    /// recent ones from the RTO estimator.
    pub clustering: bool,
    /// Clusters (k of k-means, 2).
    pub cluster_k: u32,
    /// Recent samples clustered (16, at most 64).
    pub cluster_window: u32,
    /// A sample whose cluster holds less than this share of the window is
    /// transient (0.25: with 16 samples, a cluster of 3 or fewer).
    pub cluster_min_share: f64,
}

impl Default for WscParams {
    fn default() -> Self {
        WscParams {
            corrected_rtt: true,
            dynamic_dupthresh: true,
            dupthresh_restore: DupThreshRestore::Ack,
            pending_limit: 8,
            best_start: true,
            bucket: Duration::from_secs(3600),
            clock_at_start: Duration::ZERO,
            history: 8,
            best_start_max: None,
            clustering: true,
            cluster_k: 2,
            cluster_window: 16,
            cluster_min_share: 0.25,
        }
    }
}

/// The largest clustering window (the exact 1-D k-means costs k × n²).
pub const MAX_CLUSTER_WINDOW: u32 = 64;

const DAY: Duration = Duration::from_secs(86_400);

impl WscParams {
    /// Checks the parameters; the message starts with the field's name.
    pub fn validate(&self) -> Result<(), String> {
        if self.pending_limit == 0 {
            return Err("pending_limit: must be at least 1 link RTO".into());
        }
        if self.bucket.is_zero() || self.bucket > DAY {
            return Err(format!(
                "bucket: {} is not a time-of-day bucket, choose one above 0 s and at most 24 h",
                self.bucket
            ));
        }
        if self.clock_at_start >= DAY {
            return Err(format!(
                "clock_at_start: {} is not a time of day, choose one below 24 h",
                self.clock_at_start
            ));
        }
        if self.history == 0 {
            return Err("history: must be at least 1 session".into());
        }
        if self.best_start_max == Some(0) {
            return Err("best_start_max: must be at least 1 segment".into());
        }
        if !(2..=MAX_CLUSTER_WINDOW).contains(&self.cluster_window) {
            return Err(format!(
                "cluster_window: {} samples, choose 2 to {MAX_CLUSTER_WINDOW}",
                self.cluster_window
            ));
        }
        if self.cluster_k < 2 || self.cluster_k > self.cluster_window {
            return Err(format!(
                "cluster_k: {} clusters, choose 2 to cluster_window ({})",
                self.cluster_k, self.cluster_window
            ));
        }
        if !(self.cluster_min_share > 0.0 && self.cluster_min_share < 1.0) {
            return Err(format!(
                "cluster_min_share: {} is not a share, choose one above 0 and below 1",
                self.cluster_min_share
            ));
        }
        Ok(())
    }

    /// The time-of-day bucket of simulated time `t` (seconds since zero).
    pub fn bucket_of(&self, t: Duration) -> u64 {
        let day = DAY.as_nanos() as u128;
        let tod = (t.as_nanos() as u128 + self.clock_at_start.as_nanos() as u128) % day;
        (tod / self.bucket.as_nanos() as u128) as u64
    }
}
