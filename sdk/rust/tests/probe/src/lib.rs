//! RustProbe: a test plugin with every extension point but QueueSort (a profile has one, and the
//! harness's is PrioritySort), each doing something a test can see through the real host; and
//! RustReverseSort, a QueueSort that pops pods in reverse name order.
//!
//! RustProbe:
//! - PreEnqueue gates a pod labelled `gate: closed`;
//! - PreFilter keeps the pod's name in CycleState and narrows the nodes to the one a pod's
//!   `only` label names; AddPod and RemovePod count pods added in CycleState;
//! - Filter rejects every node while that count is not zero;
//! - PostFilter nominates the first node of the statuses;
//! - Score gives ten per node label, NormalizeScore halves it;
//! - Reserve keeps the node in CycleState (Unreserve drops it), Permit makes a pod labelled
//!   `wait: "yes"` wait 5 s, PreBind refuses a pod named "prebind-fail", Bind skips (the next
//!   Bind plugin binds), PostBind logs.

use std::time::Duration;

use schedhost_plugin::{
    export_plugins, Args, BindPlugin, Code, CycleState, FilterPlugin, Host, Id, LogLevel, NodeInfo,
    NodeScore, NodeStatusMap, PermitPlugin, Plugin, Pod, PostBindPlugin, PostFilterPlugin,
    PreBindPlugin, PreEnqueuePlugin, PreFilterExtensions, PreFilterPlugin, PreFilterResult,
    QueueSortPlugin, QueuedPod, ReservePlugin, ScoreExtensions, ScorePlugin, Status,
};

pub struct Probe {
    host: Host,
    seen: Id,
    added: Id,
    reserved: Id,
}

#[derive(Clone)]
struct Seen(String);
#[derive(Clone, Copy)]
struct Added(i64);
#[derive(Clone)]
struct Reserved(String);

impl Probe {
    fn label<'a>(&self, pod: &Pod<'a>, key: &str) -> Option<&'static str> {
        pod.labels().get(self.host.lookup_id(key)).map(|v| self.host.id_str(v))
    }
    fn count(&self, state: &CycleState<'_>) -> i64 {
        state.read::<Added>(self.added).map(|a| a.0).unwrap_or(0)
    }
    fn add_to_count(&self, state: &mut CycleState<'_>, by: i64) -> Status {
        let n = self.count(state);
        state.write(self.added, Added(n + by)).into()
    }
}

impl Plugin for Probe {
    const NAME: &'static str = "RustProbe";
    const VERSION: &'static str = "1.0.0";
    fn new(host: Host, args: &Args<'_>) -> Result<Self, String> {
        args.reader(Self::NAME).done()?;
        Ok(Probe {
            host,
            seen: host.intern("RustProbe/seen"),
            added: host.intern("RustProbe/added"),
            reserved: host.intern("RustProbe/reserved"),
        })
    }
}

impl PreEnqueuePlugin for Probe {
    fn pre_enqueue(&self, pod: &Pod<'_>) -> Status {
        match self.label(pod, "gate") {
            Some("closed") => Status::unschedulable_and_unresolvable("gated by RustProbe"),
            _ => Status::success(),
        }
    }
}

impl PreFilterPlugin for Probe {
    fn pre_filter(
        &self,
        state: &mut CycleState<'_>,
        pod: &Pod<'_>,
        result: &mut PreFilterResult<'_>,
    ) -> Status {
        if let Err(e) = state.write(self.seen, Seen(pod.name().to_string())) {
            return Status::error(e);
        }
        if let Some(node) = self.label(pod, "only") {
            if let Err(e) = result.set_nodes(&[node]) {
                return Status::error(e);
            }
        }
        Status::success()
    }
}

impl PreFilterExtensions for Probe {
    fn add_pod(
        &self,
        state: &mut CycleState<'_>,
        _: &Pod<'_>,
        _: &Pod<'_>,
        _: &NodeInfo<'_>,
    ) -> Status {
        self.add_to_count(state, 1)
    }
    fn remove_pod(
        &self,
        state: &mut CycleState<'_>,
        _: &Pod<'_>,
        _: &Pod<'_>,
        _: &NodeInfo<'_>,
    ) -> Status {
        self.add_to_count(state, -1)
    }
}

impl FilterPlugin for Probe {
    fn filter(&self, state: &CycleState<'_>, pod: &Pod<'_>, _: &NodeInfo<'_>) -> Status {
        match state.read::<Seen>(self.seen) {
            Some(s) if s.0 == pod.name() => {}
            _ => return Status::error("RustProbe: PreFilter's value is not in the CycleState"),
        }
        match self.count(state) {
            0 => Status::success(),
            n => Status::unschedulable(format!("RustProbe: {n} pod(s) added")),
        }
    }
}

impl PostFilterPlugin for Probe {
    fn post_filter(
        &self,
        _: &mut CycleState<'_>,
        _: &Pod<'_>,
        statuses: &NodeStatusMap<'_>,
    ) -> (Status, Option<String>) {
        if statuses.is_empty() {
            return (Status::unschedulable("RustProbe: no node to nominate"), None);
        }
        let (node, code, _) = statuses.at(0);
        if code == Code::Success {
            return (Status::error("RustProbe: a feasible node in PostFilter's statuses"), None);
        }
        (Status::success(), Some(node.to_string()))
    }
}

impl ScorePlugin for Probe {
    fn score(&self, _: &CycleState<'_>, _: &Pod<'_>, ni: &NodeInfo<'_>) -> Result<i64, Status> {
        Ok(ni.node().map(|n| n.labels().len() as i64 * 10).unwrap_or(0))
    }
}

impl ScoreExtensions for Probe {
    fn normalize_score(&self, _: &CycleState<'_>, _: &Pod<'_>, scores: &mut [NodeScore]) -> Status {
        for s in scores.iter_mut() {
            let halved = s.score() / 2;
            s.set_score(halved);
        }
        Status::success()
    }
}

impl ReservePlugin for Probe {
    fn reserve(&self, state: &mut CycleState<'_>, _: &Pod<'_>, node: &str) -> Status {
        state.write(self.reserved, Reserved(node.to_string())).into()
    }
    fn unreserve(&self, state: &mut CycleState<'_>, _: &Pod<'_>, _: &str) {
        state.delete(self.reserved);
    }
}

impl PermitPlugin for Probe {
    fn permit(&self, state: &mut CycleState<'_>, pod: &Pod<'_>, node: &str) -> (Status, Duration) {
        match state.read::<Reserved>(self.reserved) {
            Some(r) if r.0 == node => {}
            _ => {
                return (
                    Status::error("RustProbe: Reserve's node is not in the CycleState"),
                    Duration::ZERO,
                )
            }
        }
        match self.label(pod, "wait") {
            Some("yes") => (Status::wait(), Duration::from_secs(5)),
            _ => (Status::success(), Duration::ZERO),
        }
    }
}

impl PreBindPlugin for Probe {
    fn pre_bind(&self, _: &mut CycleState<'_>, pod: &Pod<'_>, _: &str) -> Status {
        if pod.name() == "prebind-fail" {
            Status::error("RustProbe refused the bind")
        } else {
            Status::success()
        }
    }
}

impl BindPlugin for Probe {
    fn bind(&self, _: &mut CycleState<'_>, _: &Pod<'_>, _: &str) -> Status {
        Status::skip()
    }
}

impl PostBindPlugin for Probe {
    fn post_bind(&self, _: &mut CycleState<'_>, pod: &Pod<'_>, node: &str) {
        self.host.log(LogLevel::Info, &format!("RustProbe: {} bound to {node}", pod.name()));
    }
}

/// QueueSort: pods in reverse name order.
pub struct ReverseSort;

impl Plugin for ReverseSort {
    const NAME: &'static str = "RustReverseSort";
    const VERSION: &'static str = "1.0.0";
    fn new(_: Host, args: &Args<'_>) -> Result<Self, String> {
        args.reader(Self::NAME).done()?;
        Ok(ReverseSort)
    }
}

impl QueueSortPlugin for ReverseSort {
    fn less(&self, a: &QueuedPod<'_>, b: &QueuedPod<'_>) -> bool {
        let name = |q: &QueuedPod<'_>| q.pod().map(|p| p.name().to_string()).unwrap_or_default();
        name(a) > name(b)
    }
}

export_plugins!(ReverseSort: [QueueSort], Probe: [
    PreEnqueue, PreFilter, PreFilterExtensions, Filter, PostFilter, Score, ScoreExtensions,
    Reserve, Permit, PreBind, Bind, PostBind,
]);
