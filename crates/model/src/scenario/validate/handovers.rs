//! The link handovers pass: what each handover of a link switches to,
//! that it changes something, its time, and the rule of `"steady"`.

use super::check_before_end;
use super::links::check_settings;
use crate::scenario::{LinkHandoverTime, LinkSpec, Scenario, ScenarioError};

/// Checks the handovers of link `l` (at path `p`, e.g. `links[1]`).
pub(super) fn check(sc: &Scenario, p: &str, l: &LinkSpec) -> Result<(), ScenarioError> {
    for (k, h) in l.handovers.iter().enumerate() {
        let hp = format!("{p}.handovers[{k}]");
        check_settings(&hp, h.rate, h.loss.as_ref(), h.queue)?;
        if h.outage.is_zero()
            && h.rate.is_none()
            && h.delay.is_none()
            && h.queue.is_none()
            && h.loss.is_none()
        {
            return Err(ScenarioError::at(
                hp,
                "changes nothing: set an outage, or the new rate, delay, queue or loss",
            ));
        }
        if let LinkHandoverTime::At(t) = h.at {
            check_before_end(sc, &format!("{hp}.at"), t)?;
        }
        if h.at == LinkHandoverTime::Steady {
            let st = &h.steady;
            if !(st.fraction > 0.0 && st.fraction <= 1.0) {
                return Err(ScenarioError::at(
                    format!("{hp}.steady.fraction"),
                    format!("{:?} is not a fraction (above 0, at most 1)", st.fraction),
                ));
            }
            if st.earliest >= sc.duration {
                return Err(ScenarioError::at(
                    format!("{hp}.steady.earliest"),
                    format!(
                        "{} is not before the end of the run ({}), so the handover \
                         could never happen (the default is 10s)",
                        st.earliest, sc.duration
                    ),
                ));
            }
            if let Some(latest) = st.latest {
                if latest < st.earliest {
                    return Err(ScenarioError::at(
                        format!("{hp}.steady.latest"),
                        format!("{latest} is before steady.earliest ({})", st.earliest),
                    ));
                }
            }
            if st.window.is_zero() {
                return Err(ScenarioError::at(
                    format!("{hp}.steady.window"),
                    "must be above zero",
                ));
            }
            let flows: u32 = sc.flows.iter().map(|f| f.count).sum();
            if st.flow >= flows {
                return Err(ScenarioError::at(
                    format!("{hp}.steady.flow"),
                    format!("{} is not a flow index; there are {flows} flows", st.flow),
                ));
            }
        }
    }
    Ok(())
}
