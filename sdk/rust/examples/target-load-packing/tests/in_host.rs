//! TargetLoadPacking in the real host: loaded from the .so cargo built, through every point it
//! implements, its arguments' errors, and a whole simulation.

use schedhost_plugin::testing::{
    built_library, node_yaml, pod_yaml, simulate, Harness, SimulateOptions,
};
use target_load_packing::score_for;

const LABEL: &str = "schedhost.io/cpu-utilization";

fn cluster(h: &mut Harness) {
    for (name, load) in [
        ("idle", Some("0")),
        ("warm", Some("15")),
        ("busy", Some("50")),
        ("full", Some("90")),
        ("blind", None),
    ] {
        let labels: Vec<(&str, &str)> = load.map(|l| vec![(LABEL, l)]).unwrap_or_default();
        h.add_objects(&node_yaml(name, &labels, &[("cpu", "4")])).unwrap();
    }
}

fn raw_scores(h: &mut Harness, pod: &str) -> Vec<(String, i64)> {
    let mut c = h.start_cycle(pod).unwrap();
    assert!(c.pre_filter().unwrap().is_success());
    c.filter_all().unwrap();
    assert!(c.pre_score().unwrap().is_success());
    let mut out: Vec<(String, i64)> = c
        .score()
        .unwrap()
        .into_iter()
        .map(|s| (s.node.clone(), s.plugin("TargetLoadPacking").unwrap().raw))
        .collect();
    out.sort();
    out
}

#[test]
fn scores_follow_the_target_curve_from_the_node_labels() {
    let mut h = Harness::new(&[built_library("target_load_packing")]).unwrap();
    h.use_plugins(&["TargetLoadPacking"], "").unwrap();
    assert!(h.plugin_names().unwrap().contains(&"TargetLoadPacking".to_string()));
    cluster(&mut h);
    let scores = raw_scores(&mut h, &pod_yaml("p", &[], &[("cpu", "1")], "", "default"));
    let want = vec![
        ("blind".to_string(), 0),
        ("busy".to_string(), score_for(50.0, 4000, 1000, 40)),
        ("full".to_string(), 0),
        ("idle".to_string(), score_for(0.0, 4000, 1000, 40)),
        ("warm".to_string(), 100),
    ];
    assert_eq!(scores, want);
}

#[test]
fn a_pod_without_a_cpu_request_counts_the_default_request() {
    let mut h = Harness::new(&[built_library("target_load_packing")]).unwrap();
    h.use_plugins(&["TargetLoadPacking"], "[profile.plugin_config.TargetLoadPacking]\ndefault_cpu_request = \"2\"\ntarget_utilization = 60\n").unwrap();
    cluster(&mut h);
    let scores = raw_scores(&mut h, &pod_yaml("p", &[], &[], "", "default"));
    let warm = scores.iter().find(|(n, _)| n == "warm").unwrap().1;
    assert_eq!(warm, score_for(15.0, 4000, 2000, 60));
}

#[test]
fn bad_arguments_are_refused_with_the_key_and_where_it_is_written() {
    let cases = [
        ("target_utilization = 120\n", "plugin_config.TargetLoadPacking.target_utilization: must be in the range [1, 99], got 120"),
        ("targt_utilization = 30\n", "plugin_config.TargetLoadPacking.targt_utilization: unknown key; did you mean \"target_utilization\"?"),
        ("label = \"\"\n", "plugin_config.TargetLoadPacking.label: must not be empty"),
        ("default_cpu_request = \"lots\"\n", "plugin_config.TargetLoadPacking.default_cpu_request: \"lots\" is not a quantity"),
        ("target_utilization = \"40\"\n", "plugin_config.TargetLoadPacking.target_utilization: expected an integer, not a string"),
    ];
    for (toml, want) in cases {
        let mut h = Harness::new(&[built_library("target_load_packing")]).unwrap();
        h.use_plugins(
            &["TargetLoadPacking"],
            &format!("[profile.plugin_config.TargetLoadPacking]\n{toml}"),
        )
        .unwrap();
        let err = h.plugin_names().unwrap_err().to_string();
        assert!(err.contains(want), "{toml}: {err}");
        // Located at the key, in the harness's config file: "test.toml:<line>:1: plugin_config...".
        let at = err.find(": plugin_config.").expect("the key's path");
        let location: Vec<&str> = err[..at].rsplit(' ').next().unwrap().split(':').collect();
        assert_eq!(location.len(), 3, "no file:line:col before the path in {err}");
        assert!(
            location[0].ends_with(".toml")
                && location[1].parse::<u32>().is_ok()
                && location[2] == "1",
            "{err}"
        );
    }
}

#[test]
fn a_simulation_packs_pods_toward_the_target() {
    let config = "[[profile]]\nname = \"default-scheduler\"\n[profile.plugins.multi_point]\nenabled = [{ name = \"TargetLoadPacking\", weight = 10 }]\n";
    let mut manifests = String::new();
    for (name, load) in [("cold", "0"), ("target", "15"), ("hot", "70")] {
        manifests.push_str(&node_yaml(name, &[(LABEL, load)], &[("cpu", "4")]));
        manifests.push_str("---\n");
    }
    manifests.push_str(&pod_yaml("web", &[], &[("cpu", "1")], "", "default"));
    let options = SimulateOptions {
        libraries: vec![built_library("target_load_packing")],
        ..Default::default()
    };
    let out = simulate(config, &manifests, &options).unwrap();
    let pod = &out["pods"][0];
    assert_eq!(pod["status"], "Bound", "{out}");
    assert_eq!(pod["node"], "target", "{out}");
}
