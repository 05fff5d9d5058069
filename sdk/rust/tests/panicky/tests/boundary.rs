//! The SDK's boundary in the real host: panics become Error statuses, the host carries on, and
//! queueing hints and registrations cross as declared.

use schedhost_plugin::testing::{built_library, node_yaml, plugin_score, pod_yaml, Event, Harness};
use schedhost_plugin::{sys, Code, QueueingHint};

fn harness() -> Harness {
    let mut h = Harness::new(&[built_library("panicky")]).expect("the harness loads the plugin");
    h.use_plugins(&["Panicky"], "").unwrap();
    h.add_objects(&node_yaml("n1", &[], &[])).unwrap();
    h
}

#[test]
fn a_panic_in_filter_is_an_error_status_with_its_message_and_the_host_goes_on() {
    let mut h = harness();
    {
        let mut c = h.start_cycle(&pod_yaml("panic", &[], &[], "", "default")).unwrap();
        assert!(c.pre_filter().unwrap().is_success());
        let out = c.filter("n1").unwrap();
        assert_eq!(out.code, Code::Error);
        assert_eq!(out.plugin, "Panicky");
        let message = out.message();
        assert!(
            message.contains("Panicky panicked in Filter: pod panic on node n1 is not welcome"),
            "{message}"
        );
        assert!(
            message.contains("(at tests/panicky/src/lib.rs:") || message.contains("src/lib.rs:"),
            "{message}"
        );
    }
    // The same instance serves the next pod.
    {
        let mut c = h.start_cycle(&pod_yaml("calm", &[], &[], "", "default")).unwrap();
        assert!(c.pre_filter().unwrap().is_success());
        assert!(c.filter("n1").unwrap().is_success());
    }
    let mut c2 = h.start_cycle(&pod_yaml("reject", &[], &[], "", "default")).unwrap();
    c2.pre_filter().unwrap();
    let out = c2.filter("n1").unwrap();
    assert_eq!(out.code, Code::Unschedulable);
    assert_eq!(out.reasons, vec!["node(s) rejected by Panicky".to_string()]);
}

#[test]
fn a_panic_in_new_refuses_the_profile_naming_the_plugin() {
    let mut h = Harness::new(&[built_library("panicky")]).unwrap();
    h.use_plugins(&["Panicky"], "[profile.plugin_config.Panicky]\npanic_in_new = true\n").unwrap();
    let err = h.plugin_names().unwrap_err().to_string();
    assert!(err.contains("Panicky panicked in new: asked to panic in new"), "{err}");
}

#[test]
fn a_misspelt_argument_is_refused_with_the_key_and_a_suggestion() {
    let mut h = Harness::new(&[built_library("panicky")]).unwrap();
    h.use_plugins(&["Panicky"], "[profile.plugin_config.Panicky]\npanic_in_nw = true\n").unwrap();
    let err = h.plugin_names().unwrap_err().to_string();
    assert!(
        err.contains(
            "plugin_config.Panicky.panic_in_nw: unknown key; did you mean \"panic_in_new\"?"
        ),
        "{err}"
    );
}

#[test]
fn registrations_and_the_queueing_hint_cross_the_abi() {
    let mut h = harness();
    let regs = h.events_to_register().unwrap();
    let mine: Vec<_> = regs.iter().filter(|r| r.plugin == "Panicky").collect();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].resource, sys::SCHEDHOST_RESOURCE_NODE as i32);
    assert_eq!(mine[0].actions, sys::SCHEDHOST_ACTION_ADD as i32);
    assert!(mine[0].has_hint);
    let pod = pod_yaml("reject", &[], &[], "", "default");
    let welcome = Event::NodeAdd(node_yaml("n2", &[("panicky", "yes")], &[]));
    let other = Event::NodeAdd(node_yaml("n3", &[("panicky", "no")], &[]));
    assert_eq!(h.hint("Panicky", &pod, &welcome).unwrap(), QueueingHint::Queue);
    assert_eq!(h.hint("Panicky", &pod, &other).unwrap(), QueueingHint::Skip);
}

#[test]
fn scores_count_the_node_labels() {
    let mut h = harness();
    h.add_objects(&node_yaml("n2", &[("a", "1"), ("b", "2")], &[])).unwrap();
    let mut c = h.start_cycle(&pod_yaml("calm", &[], &[], "", "default")).unwrap();
    c.pre_filter().unwrap();
    c.filter_all().unwrap();
    c.pre_score().unwrap();
    let scores = c.score().unwrap();
    let raw = |node: &str| plugin_score(&scores, node, "Panicky").unwrap().raw;
    assert_eq!(raw("n1"), 1); // kubernetes.io/hostname
    assert_eq!(raw("n2"), 3);
}

#[test]
fn a_skip_at_pre_score_is_named_and_its_score_column_marked() {
    let mut h = harness();
    let mut c = h.start_cycle(&pod_yaml("skip-score", &[], &[], "", "default")).unwrap();
    assert!(c.pre_filter().unwrap().is_success());
    c.filter_all().unwrap();
    let pre_score = c.pre_score().unwrap();
    assert!(pre_score.is_success());
    assert_eq!(pre_score.skipped, vec!["Panicky".to_string()]);
    let scores = c.score().unwrap();
    let mine = scores[0].plugin("Panicky").unwrap();
    assert!(mine.skipped, "{scores:?}");
}
