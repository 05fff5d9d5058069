//! TargetLoadPacking: a load-aware Score plugin in the manner of the scheduler-plugins project's
//! Trimaran TargetLoadPacking. It packs pods onto nodes until their CPU utilization reaches a
//! target, then spreads: a node's score rises with its predicted utilization up to the target
//! and falls beyond it; a node the pod would push past 100 % scores 0.
//!
//! The measured utilization comes from a node label (by default
//! `schedhost.io/cpu-utilization`, a percentage such as "35" or "35.5") that a load agent
//! keeps current; a node without a readable value scores 0, as Trimaran scores a node without
//! metrics. The pod's share is its CPU request, or `default_cpu_request` when it requests none.
//!
//! ```toml
//! [[profile.plugins.score.enabled]]
//! name = "TargetLoadPacking"
//! weight = 1
//! [profile.plugin_config.TargetLoadPacking]
//! target_utilization = 40          # percent, 1..99
//! label = "schedhost.io/cpu-utilization"
//! default_cpu_request = "1"        # a quantity; used when a pod requests no cpu
//! ```

use schedhost_plugin::{
    export_plugins, ids, Args, CycleState, Host, Id, IntOptions, NodeInfo, NodeInfoList, Plugin,
    Pod, PreScorePlugin, QuantityOptions, ScorePlugin, Status, StringOptions, MAX_NODE_SCORE,
    MIN_NODE_SCORE,
};

/// The plugin's name in profiles.
pub const NAME: &str = "TargetLoadPacking";

/// The plugin: its arguments, resolved once per profile.
pub struct TargetLoadPacking {
    host: Host,
    target: i64,
    label: Id,
    default_cpu_milli: i64,
    state_key: Id,
}

/// What PreScore works out once per pod: the CPU (millicores) it will use.
#[derive(Clone, Copy, Debug)]
struct PodCpu(i64);

/// The score of a node with `capacity_milli` CPU at `utilization_percent` for a pod of
/// `pod_milli`, with target `target` percent (1..99). Trimaran's curve: linear from `target` at
/// 0 % to 100 at the target, then down to 0 at 100 %; above 100 %: the minimum.
pub fn score_for(
    utilization_percent: f64,
    capacity_milli: i64,
    pod_milli: i64,
    target: i64,
) -> i64 {
    if capacity_milli <= 0 {
        return MIN_NODE_SCORE;
    }
    // The measured share plus the pod's: u + 100 * pod / capacity (percent).
    let predicted = utilization_percent + 100.0 * pod_milli as f64 / capacity_milli as f64;
    let target = target as f64;
    if predicted > 100.0 {
        return MIN_NODE_SCORE;
    }
    let score = if predicted <= target {
        (100.0 - target) * predicted / target + target
    } else {
        target * (100.0 - predicted) / (100.0 - target)
    };
    (score.round() as i64).clamp(MIN_NODE_SCORE, MAX_NODE_SCORE)
}

/// A utilization label's value as a percentage in [0, 100], when it is one: digits with an
/// optional fraction ("35", "35.5"; a label value holds no sign, exponent, space or "%").
/// Read by hand rather than with `str::parse`: Score reads one per node.
pub fn parse_utilization(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut whole: u32 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        whole = whole * 10 + u32::from(b[i] - b'0');
        if whole > 100 {
            return None;
        }
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let mut value = f64::from(whole);
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let start = i;
        let mut scale = 0.1;
        while i < b.len() && b[i].is_ascii_digit() {
            value += f64::from(b[i] - b'0') * scale;
            scale *= 0.1;
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    (i == b.len() && value <= 100.0).then_some(value)
}

impl TargetLoadPacking {
    fn pod_cpu(&self, pod: &Pod<'_>) -> i64 {
        match pod.requests().get(ids::CPU) {
            0 => self.default_cpu_milli,
            n => n,
        }
    }
}

impl Plugin for TargetLoadPacking {
    const NAME: &'static str = NAME;
    const VERSION: &'static str = "1.0.0";

    fn new(host: Host, args: &Args<'_>) -> Result<Self, String> {
        let mut r = args.reader(NAME);
        let target =
            r.int("target_utilization", IntOptions { min: Some(1), max: Some(99), fallback: 40 })?;
        let label = r.string(
            "label",
            StringOptions {
                non_empty: true,
                fallback: "schedhost.io/cpu-utilization",
                ..Default::default()
            },
        )?;
        let default_cpu_milli = r.quantity(
            "default_cpu_request",
            QuantityOptions { milli: true, min: Some(1), fallback: 1000, ..Default::default() },
        )?;
        r.done()?;
        Ok(TargetLoadPacking {
            host,
            target,
            label: host.intern(&label),
            default_cpu_milli,
            state_key: host.intern("PreScoreTargetLoadPacking"),
        })
    }
}

impl PreScorePlugin for TargetLoadPacking {
    fn pre_score(
        &self,
        state: &mut CycleState<'_>,
        pod: &Pod<'_>,
        _nodes: &NodeInfoList<'_>,
    ) -> Status {
        match state.write(self.state_key, PodCpu(self.pod_cpu(pod))) {
            Ok(()) => Status::success(),
            Err(e) => Status::error(e),
        }
    }
}

impl ScorePlugin for TargetLoadPacking {
    fn score(
        &self,
        state: &CycleState<'_>,
        pod: &Pod<'_>,
        ni: &NodeInfo<'_>,
    ) -> Result<i64, Status> {
        let pod_milli = match state.read::<PodCpu>(self.state_key) {
            Some(c) => c.0,
            None => self.pod_cpu(pod),
        };
        let Some(node) = ni.node() else { return Ok(MIN_NODE_SCORE) };
        let Some(value) = node.labels().get(self.label) else { return Ok(MIN_NODE_SCORE) };
        let Some(utilization) = parse_utilization(self.host.id_str(value)) else {
            return Ok(MIN_NODE_SCORE);
        };
        Ok(score_for(utilization, node.capacity().get(ids::CPU), pod_milli, self.target))
    }
}

export_plugins!(TargetLoadPacking: [PreScore, Score]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_rises_to_the_target_then_falls() {
        // 4 cores, a 1-core pod: 0 % measured predicts 25 %.
        assert_eq!(score_for(0.0, 4000, 1000, 40), 78); // 60 * 25 / 40 + 40 = 77.5
        assert_eq!(score_for(15.0, 4000, 1000, 40), 100); // predicted 40 = the target
        assert_eq!(score_for(50.0, 4000, 1000, 40), 17); // predicted 75 %: 40 * 25 / 60
        assert_eq!(score_for(80.0, 4000, 1000, 40), MIN_NODE_SCORE); // 105 % predicted
        assert_eq!(score_for(10.0, 0, 1000, 40), MIN_NODE_SCORE);
    }

    #[test]
    fn utilization_labels_parse_as_percentages() {
        assert_eq!(parse_utilization("35"), Some(35.0));
        assert_eq!(parse_utilization("35.5"), Some(35.5));
        assert_eq!(parse_utilization("35%"), None);
        assert_eq!(parse_utilization("nan"), None);
        assert_eq!(parse_utilization("100"), Some(100.0));
        assert_eq!(parse_utilization("100.5"), None);
        assert_eq!(parse_utilization("7."), None);
        assert_eq!(parse_utilization(""), None);
        assert_eq!(parse_utilization("101"), None);
        assert_eq!(parse_utilization("-1"), None);
        assert_eq!(parse_utilization("busy"), None);
    }
}
