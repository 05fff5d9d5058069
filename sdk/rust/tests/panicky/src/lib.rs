//! A test plugin for the SDK's boundary: Filter panics for a pod named "panic", rejects one
//! named "reject", and rejects nodes labelled `panicky-avoid=v<N>` where N is the build's
//! variant (`PANICKY_VARIANT` at compile time, 1 by default; version N.0.0), so tests tell two
//! builds apart across a hot swap. PreScore skips a pod named "skip-score"; Score gives the
//! node's label count; a node labelled
//! `panicky=yes` being added requeues a pod it rejected (a queueing hint).

use schedhost_plugin::{
    export_plugins, sys, Args, ClusterEvent, CycleState, EnqueueExtensions, EventObject,
    FilterPlugin, Host, Id, NodeInfo, NodeInfoList, Plugin, Pod, PreScorePlugin, QueueingHint,
    Registration, ScorePlugin, Status,
};

const VARIANT: &str = match option_env!("PANICKY_VARIANT") {
    Some(v) => v,
    None => "1",
};

pub struct Panicky {
    host: Host,
    avoid_key: Id,
    avoid: Id,
}

impl Plugin for Panicky {
    const NAME: &'static str = "Panicky";
    const VERSION: &'static str = match VARIANT.as_bytes() {
        b"2" => "2.0.0",
        _ => "1.0.0",
    };
    fn new(host: Host, args: &Args<'_>) -> Result<Self, String> {
        let mut r = args.reader(Self::NAME);
        if r.bool("panic_in_new", false)? {
            panic!("asked to panic in new");
        }
        r.done()?;
        let avoid = format!("v{}", if VARIANT == "2" { "2" } else { "1" });
        Ok(Panicky { host, avoid_key: host.intern("panicky-avoid"), avoid: host.intern(&avoid) })
    }
}

impl FilterPlugin for Panicky {
    fn filter(&self, _state: &CycleState<'_>, pod: &Pod<'_>, ni: &NodeInfo<'_>) -> Status {
        match pod.name() {
            "panic" => panic!("pod {} on node {} is not welcome", pod.name(), ni.name()),
            "reject" => Status::unschedulable("node(s) rejected by Panicky"),
            _ if ni.node().and_then(|n| n.labels().get(self.avoid_key)) == Some(self.avoid) => {
                Status::unschedulable("node(s) avoided by this build of Panicky")
            }
            _ => Status::success(),
        }
    }
}

impl PreScorePlugin for Panicky {
    fn pre_score(
        &self,
        _state: &mut CycleState<'_>,
        pod: &Pod<'_>,
        _nodes: &NodeInfoList<'_>,
    ) -> Status {
        if pod.name() == "skip-score" {
            Status::skip()
        } else {
            Status::success()
        }
    }
}

impl ScorePlugin for Panicky {
    fn score(
        &self,
        _state: &CycleState<'_>,
        _pod: &Pod<'_>,
        ni: &NodeInfo<'_>,
    ) -> Result<i64, Status> {
        Ok(ni.node().map(|n| n.labels().len() as i64).unwrap_or(0))
    }
}

impl EnqueueExtensions for Panicky {
    fn events_to_register(&self) -> Vec<Registration> {
        vec![Registration {
            event: ClusterEvent {
                resource: sys::SCHEDHOST_RESOURCE_NODE as i32,
                actions: sys::SCHEDHOST_ACTION_ADD as i32,
            },
            hint: true,
        }]
    }
    fn queueing_hint(
        &self,
        _pod: &Pod<'_>,
        _event: ClusterEvent,
        _old: &EventObject<'_>,
        new: &EventObject<'_>,
    ) -> QueueingHint {
        let yes = self.host.intern("yes");
        let key = self.host.intern("panicky");
        match new.node() {
            Some(n) if n.labels().get(key) == Some(yes) => QueueingHint::Queue,
            _ => QueueingHint::Skip,
        }
    }
}

export_plugins!(Panicky: [Filter, PreScore, Score, EnqueueExtensions]);
