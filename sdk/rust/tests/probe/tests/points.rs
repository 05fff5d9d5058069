//! Every extension point of RustProbe through the real host, as the scheduler calls them.

use schedhost_plugin::testing::{
    built_library, node_yaml, plugin_score, pod_yaml, simulate, Harness, SimulateOptions,
};
use schedhost_plugin::Code;

fn harness() -> Harness {
    let mut h = Harness::new(&[built_library("rust_probe")]).expect("the harness loads RustProbe");
    h.use_plugins(&["RustProbe"], "").unwrap();
    h.add_objects(&node_yaml("n1", &[], &[])).unwrap();
    h.add_objects(&node_yaml("n2", &[("a", "1"), ("b", "2")], &[])).unwrap();
    h
}

fn pod(name: &str, labels: &[(&str, &str)]) -> String {
    pod_yaml(name, labels, &[], "", "default")
}

#[test]
fn pre_enqueue_gates_a_pod() {
    let mut h = harness();
    let gated = h.pre_enqueue(&pod("p", &[("gate", "closed")])).unwrap();
    assert_eq!(gated.code, Code::UnschedulableAndUnresolvable);
    assert_eq!(gated.plugin, "RustProbe");
    assert_eq!(gated.reasons, vec!["gated by RustProbe".to_string()]);
    assert!(h.pre_enqueue(&pod("p", &[("gate", "open")])).unwrap().is_success());
}

#[test]
fn pre_filter_narrows_the_nodes_and_filter_reads_its_cycle_state() {
    let mut h = harness();
    let mut c = h.start_cycle(&pod("p", &[("only", "n2")])).unwrap();
    assert!(c.pre_filter().unwrap().is_success());
    assert_eq!(c.pre_filter_nodes().unwrap(), Some(vec!["n2".to_string()]));
    assert!(c.filter("n2").unwrap().is_success());
    assert!(!c.filter("n1").unwrap().is_success());
}

#[test]
fn add_pod_and_remove_pod_change_what_filter_sees() {
    let mut h = harness();
    let mut c = h.start_cycle(&pod("p", &[])).unwrap();
    c.pre_filter().unwrap();
    assert!(c.add_pod(&pod_yaml("other", &[], &[], "n1", "default"), "n1").unwrap().is_success());
    let out = c.filter("n1").unwrap();
    assert_eq!(out.code, Code::Unschedulable);
    assert_eq!(out.reasons, vec!["RustProbe: 1 pod(s) added".to_string()]);
    assert!(c.remove_pod("default/other", "n1").unwrap().is_success());
    assert!(c.filter("n1").unwrap().is_success());
}

#[test]
fn post_filter_nominates_from_the_rejections() {
    let mut h = harness();
    let mut c = h.start_cycle(&pod("p", &[("only", "nowhere")])).unwrap();
    c.pre_filter().unwrap();
    let all = c.filter_all().unwrap();
    assert!(all.iter().all(|(_, r)| !r.is_success()), "{all:?}");
    let (out, nominated) = c.post_filter().unwrap();
    assert!(out.is_success(), "{out:?}");
    assert_eq!(nominated, "n1");
}

#[test]
fn score_and_normalize_score() {
    let mut h = harness();
    let mut c = h.start_cycle(&pod("p", &[])).unwrap();
    c.pre_filter().unwrap();
    c.filter_all().unwrap();
    c.pre_score().unwrap();
    let scores = c.score().unwrap();
    let mine = |node: &str| plugin_score(&scores, node, "RustProbe").unwrap().clone();
    // n2: hostname, a, b (30, halved); n1: hostname (10, halved).
    assert_eq!((mine("n2").raw, mine("n2").normalized), (30, 15));
    assert_eq!((mine("n1").raw, mine("n1").normalized), (10, 5));
}

#[test]
fn reserve_permit_pre_bind_bind_and_post_bind() {
    let mut h = harness();
    {
        let mut c = h.start_cycle(&pod("waits", &[("wait", "yes")])).unwrap();
        c.pre_filter().unwrap();
        assert!(c.reserve("n1").unwrap().is_success());
        let (out, waits) = c.permit("n1").unwrap();
        assert_eq!(out.code, Code::Wait);
        assert_eq!(waits, vec![("RustProbe".to_string(), 5_000_000_000)]);
        c.unreserve("n1").unwrap();
        // Permit reads Reserve's value: gone after Unreserve.
        assert_eq!(c.permit("n1").unwrap().0.code, Code::Error);
    }
    {
        let mut c = h.start_cycle(&pod("prebind-fail", &[])).unwrap();
        c.pre_filter().unwrap();
        c.reserve("n1").unwrap();
        let out = c.pre_bind("n1").unwrap();
        assert_eq!(out.code, Code::Error);
        // The host wraps an Error with the point and plugin, as upstream does.
        assert_eq!(
            out.message(),
            "running PreBind plugin \"RustProbe\": RustProbe refused the bind"
        );
    }
    let (node, message) = h.schedule_one(&pod("binds", &[])).unwrap();
    assert!(!node.is_empty(), "{message}");
    // RustProbe's Bind skipped; DefaultBinder bound it.
    assert_eq!(h.bindings().unwrap(), vec![format!("default/binds -> {node}")]);
}

#[test]
fn queue_sort_orders_the_queue_in_a_simulation() {
    // One node with room for one pod; two pods of one priority compete.
    let mut cluster = node_yaml("n1", &[], &[("pods", "1")]);
    for name in ["alpha", "omega"] {
        cluster.push_str("---\n");
        cluster.push_str(&pod(name, &[]));
    }
    let options =
        SimulateOptions { libraries: vec![built_library("rust_probe")], ..Default::default() };
    let bound = |config: &str| {
        let out = simulate(config, &cluster, &options).unwrap();
        let pods = out["pods"].as_array().unwrap().clone();
        pods.iter()
            .find(|p| p["status"] == "Bound")
            .map(|p| p["name"].as_str().unwrap().to_string())
    };
    // PrioritySort: the earlier pod first.
    assert_eq!(bound("").as_deref(), Some("alpha"));
    let reverse = "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.queue_sort]\n\
                   enabled = [{ name = \"RustReverseSort\" }]\n\
                   disabled = [{ name = \"PrioritySort\" }]\n";
    assert_eq!(bound(reverse).as_deref(), Some("omega"));
}
