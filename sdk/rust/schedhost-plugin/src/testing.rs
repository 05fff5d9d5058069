//! Test a plugin inside the real host, in-process, from `cargo test` (feature `testing`).
//!
//! Nothing here is a fake: the harness is `libschedhost-testing.so` (package
//! `schedhost-sdk-testing`, or `<build>/lib` of a schedhost build tree) — the host's own loader,
//! config, snapshot, framework and `schedctl simulate` — driven through its C API
//! (`schedhost/testing.h`). Your plugin is loaded from the `.so` cargo built, through the same
//! checks, `dlopen` and ABI negotiation schedhostd does.
//!
//! ```no_run
//! use schedhost_plugin::testing::{built_library, node_yaml, pod_yaml, Harness};
//!
//! let mut h = Harness::new(&[built_library("target_load_packing")]).unwrap();
//! h.use_plugins(&["TargetLoadPacking"], "").unwrap();
//! h.add_objects(&node_yaml("n1", &[("schedhost.io/cpu-utilization", "10")], &[])).unwrap();
//! let mut c = h.start_cycle(&pod_yaml("p", &[], &[("cpu", "1")], "", "default")).unwrap();
//! assert!(c.pre_filter().unwrap().is_success());
//! c.filter_all().unwrap();
//! c.pre_score().unwrap();
//! let scores = c.score().unwrap();
//! ```
//!
//! The library is found at `$SCHEDHOST_TESTING_LIBRARY` (a file), else in
//! `lib/schedhost/testing/` under `$SCHEDHOST_SDK_PREFIX`, `/usr/local` and `/usr`. The host's
//! builtin plugins (PrioritySort, DefaultBinder, the default profile) are found beside it, or at
//! `$SCHEDHOST_PLUGIN_DIR`.

use std::ffi::{c_char, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::status::Code;

/// A request the host refused (a manifest, a config, a library, a call out of upstream's
/// order), or a harness that could not be loaded; the text says which and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// The harness's result type.
pub type Result<T> = std::result::Result<T, Error>;

type Text = *mut c_char;

struct Api {
    harness_new: unsafe extern "C" fn(*const c_char, *mut *mut Raw) -> Text,
    harness_delete: unsafe extern "C" fn(*mut Raw),
    harness_call: unsafe extern "C" fn(*mut Raw, *const c_char) -> Text,
    cycle_start: unsafe extern "C" fn(*mut Raw, *const c_char, *mut *mut Raw) -> Text,
    cycle_delete: unsafe extern "C" fn(*mut Raw),
    cycle_call: unsafe extern "C" fn(*mut Raw, *const c_char) -> Text,
    run: unsafe extern "C" fn(*const c_char) -> Text,
    free: unsafe extern "C" fn(Text),
}

#[repr(C)]
struct Raw {
    _opaque: [u8; 0],
}

fn candidates() -> Vec<PathBuf> {
    if let Ok(file) = std::env::var("SCHEDHOST_TESTING_LIBRARY") {
        return vec![PathBuf::from(file)];
    }
    let mut prefixes: Vec<PathBuf> = Vec::new();
    if let Ok(p) = std::env::var("SCHEDHOST_SDK_PREFIX") {
        prefixes.push(PathBuf::from(p));
    }
    prefixes.push(PathBuf::from("/usr/local"));
    prefixes.push(PathBuf::from("/usr"));
    prefixes.into_iter().map(|p| p.join("lib/schedhost/testing/libschedhost-testing.so")).collect()
}

fn api() -> Result<&'static Api> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        let tried = candidates();
        let Some(path) = tried.iter().find(|p| p.is_file()) else {
            let list: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
            return Err(format!(
                "libschedhost-testing.so not found (tried {}): install schedhost-sdk-testing, or set \
                 SCHEDHOST_TESTING_LIBRARY to the file (a build tree has it in <build>/lib)",
                list.join(", ")
            ));
        };
        // SAFETY: the library is the host's harness; it stays loaded for the process (leaked),
        // since the host keeps threads and plugin libraries of its own.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("cannot load {}: {e}", path.display()))?;
        let lib: &'static libloading::Library = Box::leak(Box::new(lib));
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbols have the signatures of schedhost/testing.h.
                *unsafe { lib.get($name) }.map_err(|e| {
                    format!("{} has no {} ({e}): it predates the C API of schedhost/testing.h", path.display(),
                            String::from_utf8_lossy(&$name[..$name.len() - 1]))
                })?
            };
        }
        Ok(Api {
            harness_new: sym!(b"schedhost_testing_harness_new\0"),
            harness_delete: sym!(b"schedhost_testing_harness_delete\0"),
            harness_call: sym!(b"schedhost_testing_harness_call\0"),
            cycle_start: sym!(b"schedhost_testing_cycle_start\0"),
            cycle_delete: sym!(b"schedhost_testing_cycle_delete\0"),
            cycle_call: sym!(b"schedhost_testing_cycle_call\0"),
            run: sym!(b"schedhost_testing_run\0"),
            free: sym!(b"schedhost_testing_free\0"),
        })
    })
    .as_ref()
    .map_err(|e| Error(e.clone()))
}

fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error("a request may not contain NUL bytes".into()))
}

fn answer(api: &Api, text: Text) -> Result<Value> {
    if text.is_null() {
        return Err(Error("the harness answered nothing (out of memory?)".into()));
    }
    // SAFETY: the library returns a NUL-terminated text it allocated.
    let doc = unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned();
    // SAFETY: freed once, by the library that made it.
    unsafe { (api.free)(text) };
    let mut v: Value = serde_json::from_str(&doc)
        .map_err(|e| Error(format!("the harness answered {doc:?}: {e}")))?;
    if let Some(e) = v.get("error") {
        return Err(Error(e.as_str().unwrap_or_default().to_string()));
    }
    Ok(v.get_mut("ok").map(Value::take).unwrap_or(Value::Null))
}

/// An extension point's outcome: its code, the plugin that decided it ("" when every plugin
/// succeeded) and the reasons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The code.
    pub code: Code,
    /// The deciding plugin.
    pub plugin: String,
    /// The reasons, in order.
    pub reasons: Vec<String>,
    /// PreFilter and PreScore: the plugins that returned Skip, in profile order (the code stays
    /// Success).
    pub skipped: Vec<String>,
}

impl Outcome {
    fn from(v: &Value) -> Outcome {
        Outcome {
            code: Code::from_raw(v["code"].as_i64().unwrap_or(1) as i32),
            plugin: v["plugin"].as_str().unwrap_or_default().to_string(),
            reasons: strings(&v["reasons"]),
            skipped: strings(&v["skipped"]),
        }
    }
    /// Whether the code is Success.
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }
    /// The reasons joined with ", ".
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// One Score plugin's score of a node: raw, after NormalizeScore, and times its weight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginScore {
    /// The plugin.
    pub plugin: String,
    /// Score's answer.
    pub raw: i64,
    /// After NormalizeScore (raw without one).
    pub normalized: i64,
    /// Times the plugin's weight.
    pub weighted: i64,
    /// The plugin returned Skip at PreScore, so it did not score this node (raw 0 says nothing).
    pub skipped: bool,
}

/// A feasible node's total and its plugins' scores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeScore {
    /// The node.
    pub node: String,
    /// The sum of the weighted scores.
    pub total: i64,
    /// Each Score plugin's score.
    pub plugins: Vec<PluginScore>,
}

impl NodeScore {
    /// The score of Score plugin `name` on this node.
    pub fn plugin(&self, name: &str) -> Option<&PluginScore> {
        self.plugins.iter().find(|p| p.plugin == name)
    }
}

/// The score of Score plugin `plugin` on `node`, from [`Cycle::score`]'s answer.
pub fn plugin_score<'s>(
    scores: &'s [NodeScore],
    node: &str,
    plugin: &str,
) -> Option<&'s PluginScore> {
    scores.iter().find(|s| s.node == node)?.plugin(plugin)
}

/// A cluster event as the host's event router hands it to the queue; objects are manifests.
#[derive(Clone, Debug)]
pub enum Event {
    /// A node was added.
    NodeAdd(String),
    /// A node changed (old, new).
    NodeUpdate(String, String),
    /// A node was deleted.
    NodeDelete(String),
    /// A bound pod appeared.
    AssignedPodAdd(String),
    /// A bound pod changed (old, new).
    AssignedPodUpdate(String, String),
    /// A bound pod went away.
    AssignedPodDelete(String),
}

impl Event {
    fn to_json(&self) -> Value {
        match self {
            Event::NodeAdd(n) => json!({"kind": "node_add", "new": n}),
            Event::NodeUpdate(o, n) => json!({"kind": "node_update", "old": o, "new": n}),
            Event::NodeDelete(o) => json!({"kind": "node_delete", "old": o}),
            Event::AssignedPodAdd(n) => json!({"kind": "assigned_pod_add", "new": n}),
            Event::AssignedPodUpdate(o, n) => {
                json!({"kind": "assigned_pod_update", "old": o, "new": n})
            }
            Event::AssignedPodDelete(o) => json!({"kind": "assigned_pod_delete", "old": o}),
        }
    }
}

/// A registration of EventsToRegister, as the queue sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRegistration {
    /// The plugin.
    pub plugin: String,
    /// `sys::SCHEDHOST_RESOURCE_*`.
    pub resource: i32,
    /// `sys::SCHEDHOST_ACTION_*` bits.
    pub actions: i32,
    /// Whether a queueing hint decides.
    pub has_hint: bool,
}

/// A plugin registry, one profile's framework and a cluster snapshot (testing.hpp's Harness).
pub struct Harness {
    api: &'static Api,
    raw: *mut Raw,
}

impl Drop for Harness {
    fn drop(&mut self) {
        // SAFETY: made by harness_new, deleted once; cycles borrow the harness, so none is left.
        unsafe { (self.api.harness_delete)(self.raw) };
    }
}

/// The `.so` cargo built for library `name` of this workspace, beside the running test:
/// `target/<profile>/lib<name>.so`.
pub fn built_library(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let file = format!("lib{name}.so");
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    for _ in 0..2 {
        if dir.join(&file).is_file() {
            return dir.join(&file);
        }
        if !dir.pop() {
            break;
        }
    }
    exe.parent()
        .and_then(Path::parent)
        .map(|d| d.join(&file))
        .unwrap_or_else(|| PathBuf::from(file))
}

impl Harness {
    /// Loads the builtin plugins and `libraries` (your plugin's `.so`) through the host's loader.
    pub fn new<P: AsRef<Path>>(libraries: &[P]) -> Result<Harness> {
        Harness::with_plugin_dir(libraries, "")
    }

    /// As [`Harness::new`] with the builtin plugins from `plugin_dir`.
    pub fn with_plugin_dir<P: AsRef<Path>>(libraries: &[P], plugin_dir: &str) -> Result<Harness> {
        let api = api()?;
        let libs: Vec<String> =
            libraries.iter().map(|p| p.as_ref().display().to_string()).collect();
        let req = cstring(&json!({"libraries": libs, "plugin_dir": plugin_dir}).to_string())?;
        let mut raw: *mut Raw = std::ptr::null_mut();
        // SAFETY: the request is a NUL-terminated text; `raw` receives the handle.
        answer(api, unsafe { (api.harness_new)(req.as_ptr(), &mut raw) })?;
        Ok(Harness { api, raw })
    }

    fn call(&mut self, req: Value) -> Result<Value> {
        let text = cstring(&req.to_string())?;
        // SAFETY: the handle is live; the request is NUL-terminated.
        answer(self.api, unsafe { (self.api.harness_call)(self.raw, text.as_ptr()) })
    }

    /// A profile of `plugins` at every point they implement plus PrioritySort and DefaultBinder
    /// (every default plugin disabled); `extra_toml` is appended (a
    /// `[profile.plugin_config.<Name>]` table).
    pub fn use_plugins(&mut self, plugins: &[&str], extra_toml: &str) -> Result<()> {
        self.call(json!({"op": "use_plugins", "plugins": plugins, "extra_toml": extra_toml}))
            .map(|_| ())
    }
    /// Uses the first profile of a whole schedhost config (TOML).
    pub fn set_config(&mut self, toml: &str) -> Result<()> {
        self.call(json!({"op": "set_config", "toml": toml})).map(|_| ())
    }
    /// Adds the Nodes, bound Pods, Namespaces and objects of declared kinds of `yaml`.
    pub fn add_objects(&mut self, yaml: &str) -> Result<()> {
        self.call(json!({"op": "add_objects", "yaml": yaml})).map(|_| ())
    }
    /// The profile's plugins; builds the profile (a refused config is an Error with its
    /// file:line:col).
    pub fn plugin_names(&mut self) -> Result<Vec<String>> {
        self.call(json!({"op": "plugin_names"})).map(|v| strings(&v))
    }
    /// Runs the PreEnqueue plugins on a pod.
    pub fn pre_enqueue(&mut self, pod_yaml: &str) -> Result<Outcome> {
        self.call(json!({"op": "pre_enqueue", "pod": pod_yaml})).map(|v| Outcome::from(&v))
    }
    /// A whole cycle, PreFilter to PostBind: the node, or "" and upstream's message.
    pub fn schedule_one(&mut self, pod_yaml: &str) -> Result<(String, String)> {
        let v = self.call(json!({"op": "schedule_one", "pod": pod_yaml}))?;
        Ok((
            v["node"].as_str().unwrap_or_default().to_string(),
            v["message"].as_str().unwrap_or_default().to_string(),
        ))
    }
    /// What Bind plugins bound, "namespace/name -> node".
    pub fn bindings(&mut self) -> Result<Vec<String>> {
        self.call(json!({"op": "bindings"})).map(|v| strings(&v))
    }
    /// The profile's event registrations, in plugin order.
    pub fn events_to_register(&mut self) -> Result<Vec<EventRegistration>> {
        let v = self.call(json!({"op": "events_to_register"}))?;
        Ok(v.as_array()
            .map(|a| {
                a.iter()
                    .map(|r| EventRegistration {
                        plugin: r["plugin"].as_str().unwrap_or_default().to_string(),
                        resource: r["resource"].as_i64().unwrap_or(0) as i32,
                        actions: r["actions"].as_i64().unwrap_or(0) as i32,
                        has_hint: r["has_hint"].as_bool().unwrap_or(false),
                    })
                    .collect()
            })
            .unwrap_or_default())
    }
    /// Whether `event` requeues the pod of `pod_yaml`, rejected by `plugin`, as the queue decides.
    pub fn hint(
        &mut self,
        plugin: &str,
        pod_yaml: &str,
        event: &Event,
    ) -> Result<crate::QueueingHint> {
        let v = self.call(
            json!({"op": "hint", "plugin": plugin, "pod": pod_yaml, "event": event.to_json()}),
        )?;
        Ok(if v == "Queue" { crate::QueueingHint::Queue } else { crate::QueueingHint::Skip })
    }
    /// Begins a cycle for a pending pod.
    pub fn start_cycle(&mut self, pod_yaml: &str) -> Result<Cycle<'_>> {
        let text = cstring(pod_yaml)?;
        let mut raw: *mut Raw = std::ptr::null_mut();
        // SAFETY: as call; `raw` receives the handle.
        answer(self.api, unsafe { (self.api.cycle_start)(self.raw, text.as_ptr(), &mut raw) })?;
        Ok(Cycle { api: self.api, raw, _harness: std::marker::PhantomData })
    }
}

/// One pod's scheduling cycle: the extension points one by one in upstream's order on one
/// CycleState (testing.hpp's Cycle).
pub struct Cycle<'h> {
    api: &'static Api,
    raw: *mut Raw,
    _harness: std::marker::PhantomData<&'h mut Harness>,
}

impl Drop for Cycle<'_> {
    fn drop(&mut self) {
        // SAFETY: made by cycle_start, deleted once, before its harness.
        unsafe { (self.api.cycle_delete)(self.raw) };
    }
}

impl Cycle<'_> {
    fn call(&mut self, req: Value) -> Result<Value> {
        let text = cstring(&req.to_string())?;
        // SAFETY: the handle is live; the request is NUL-terminated.
        answer(self.api, unsafe { (self.api.cycle_call)(self.raw, text.as_ptr()) })
    }
    fn outcome(&mut self, req: Value) -> Result<Outcome> {
        self.call(req).map(|v| Outcome::from(&v))
    }
    /// Every PreFilter plugin.
    pub fn pre_filter(&mut self) -> Result<Outcome> {
        self.outcome(json!({"op": "pre_filter"}))
    }
    /// The node set PreFilter narrowed the cycle to; None: all.
    pub fn pre_filter_nodes(&mut self) -> Result<Option<Vec<String>>> {
        self.call(json!({"op": "pre_filter_nodes"})).map(|v| (!v.is_null()).then(|| strings(&v)))
    }
    /// PreFilterExtensions.AddPod: `pod_yaml` is added to a copy of `node`.
    pub fn add_pod(&mut self, pod_yaml: &str, node: &str) -> Result<Outcome> {
        self.outcome(json!({"op": "add_pod", "pod": pod_yaml, "node": node}))
    }
    /// PreFilterExtensions.RemovePod of pod "namespace/name" on `node`.
    pub fn remove_pod(&mut self, pod: &str, node: &str) -> Result<Outcome> {
        self.outcome(json!({"op": "remove_pod", "pod": pod, "node": node}))
    }
    /// Every Filter plugin on `node`.
    pub fn filter(&mut self, node: &str) -> Result<Outcome> {
        self.outcome(json!({"op": "filter", "node": node}))
    }
    /// Filter on every node, by name.
    pub fn filter_all(&mut self) -> Result<Vec<(String, Outcome)>> {
        let v = self.call(json!({"op": "filter_all"}))?;
        Ok(v.as_array()
            .map(|a| {
                a.iter()
                    .map(|r| {
                        (
                            r["node"].as_str().unwrap_or_default().to_string(),
                            Outcome::from(&r["result"]),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default())
    }
    /// The PostFilter plugins with FilterAll's rejections: the outcome and the nominated node.
    pub fn post_filter(&mut self) -> Result<(Outcome, String)> {
        let v = self.call(json!({"op": "post_filter"}))?;
        Ok((
            Outcome::from(&v["result"]),
            v["nominated_node"].as_str().unwrap_or_default().to_string(),
        ))
    }
    /// The PreScore plugins on FilterAll's feasible nodes.
    pub fn pre_score(&mut self) -> Result<Outcome> {
        self.outcome(json!({"op": "pre_score"}))
    }
    /// Score, NormalizeScore and the weights on the feasible nodes, by node name.
    pub fn score(&mut self) -> Result<Vec<NodeScore>> {
        let v = self.call(json!({"op": "score"}))?;
        Ok(v.as_array()
            .map(|a| {
                a.iter()
                    .map(|s| NodeScore {
                        node: s["node"].as_str().unwrap_or_default().to_string(),
                        total: s["total"].as_i64().unwrap_or(0),
                        plugins: s["plugins"]
                            .as_array()
                            .map(|ps| {
                                ps.iter()
                                    .map(|p| PluginScore {
                                        plugin: p["plugin"]
                                            .as_str()
                                            .unwrap_or_default()
                                            .to_string(),
                                        raw: p["raw"].as_i64().unwrap_or(0),
                                        normalized: p["normalized"].as_i64().unwrap_or(0),
                                        weighted: p["weighted"].as_i64().unwrap_or(0),
                                        skipped: p["skipped"].as_bool().unwrap_or(false),
                                    })
                                    .collect()
                            })
                            .unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default())
    }
    /// Reserve on `node`.
    pub fn reserve(&mut self, node: &str) -> Result<Outcome> {
        self.outcome(json!({"op": "reserve", "node": node}))
    }
    /// Every Reserve plugin's Unreserve.
    pub fn unreserve(&mut self, node: &str) -> Result<()> {
        self.call(json!({"op": "unreserve", "node": node})).map(|_| ())
    }
    /// The Permit plugins: the outcome and each waiting plugin's timeout in nanoseconds.
    pub fn permit(&mut self, node: &str) -> Result<(Outcome, Vec<(String, i64)>)> {
        let v = self.call(json!({"op": "permit", "node": node}))?;
        let waits = v["waits"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|w| {
                        (
                            w["plugin"].as_str().unwrap_or_default().to_string(),
                            w["timeout_ns"].as_i64().unwrap_or(0),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok((Outcome::from(&v["result"]), waits))
    }
    /// PreBind.
    pub fn pre_bind(&mut self, node: &str) -> Result<Outcome> {
        self.outcome(json!({"op": "pre_bind", "node": node}))
    }
    /// Bind (plugins in order until one does not Skip).
    pub fn bind(&mut self, node: &str) -> Result<Outcome> {
        self.outcome(json!({"op": "bind", "node": node}))
    }
    /// PostBind.
    pub fn post_bind(&mut self, node: &str) -> Result<()> {
        self.call(json!({"op": "post_bind", "node": node})).map(|_| ())
    }
}

/// Inputs of [`simulate`] and [`explain`] besides the config and manifests.
#[derive(Clone, Debug, Default)]
pub struct SimulateOptions {
    /// Replace the config's `[host] libraries` (the test's freshly built `.so`).
    pub libraries: Vec<PathBuf>,
    /// The builtin plugins' directory ("" as for the harness).
    pub plugin_dir: String,
    /// Fixes the virtual clock and tie-breaks.
    pub seed: u64,
}

fn run(op: &str, config: &str, manifests: &str, o: &SimulateOptions) -> Result<Value> {
    let api = api()?;
    let libs: Vec<String> = o.libraries.iter().map(|p| p.display().to_string()).collect();
    let req = json!({"op": op, "config": config, "manifests": manifests, "libraries": libs,
                     "plugin_dir": o.plugin_dir, "seed": o.seed});
    let text = cstring(&req.to_string())?;
    // SAFETY: the request is NUL-terminated.
    answer(api, unsafe { (api.run)(text.as_ptr()) })
}

/// `schedctl simulate -o json` as a function: `{"pods": [{namespace, name, node, status,
/// message, ...}], "evicted": [...], "idle": bool}`.
pub fn simulate(config_toml: &str, manifests: &str, options: &SimulateOptions) -> Result<Value> {
    run("simulate", config_toml, manifests, options)
}

/// `schedctl simulate --explain -o json` as a function: the explain document.
pub fn explain(config_toml: &str, manifests: &str, options: &SimulateOptions) -> Result<Value> {
    run("explain", config_toml, manifests, options)
}

fn labels_yaml(labels: &[(&str, &str)]) -> String {
    let items: Vec<String> = labels.iter().map(|(k, v)| format!("{k:?}: {v:?}")).collect();
    format!("{{{}}}", items.join(", "))
}

/// The manifest of node `name` with `labels` (kubernetes.io/hostname added) and `allocatable`,
/// also its capacity (defaults: 4 cpu, 16Gi, 110 pods).
pub fn node_yaml(name: &str, labels: &[(&str, &str)], allocatable: &[(&str, &str)]) -> String {
    let mut all: Vec<(&str, &str)> = labels.to_vec();
    if !all.iter().any(|(k, _)| *k == "kubernetes.io/hostname") {
        all.push(("kubernetes.io/hostname", name));
    }
    let mut res: Vec<(&str, &str)> = vec![("cpu", "4"), ("memory", "16Gi"), ("pods", "110")];
    for (k, v) in allocatable {
        match res.iter_mut().find(|(rk, _)| rk == k) {
            Some(e) => e.1 = v,
            None => res.push((k, v)),
        }
    }
    let r = labels_yaml(&res);
    format!("apiVersion: v1\nkind: Node\nmetadata:\n  name: {name:?}\n  labels: {}\nstatus:\n  capacity: {r}\n  allocatable: {r}\n", labels_yaml(&all))
}

/// The manifest of pod `name` in `namespace` with `labels`, one container requesting
/// `requests`, bound to `node` unless it is "".
pub fn pod_yaml(
    name: &str,
    labels: &[(&str, &str)],
    requests: &[(&str, &str)],
    node: &str,
    namespace: &str,
) -> String {
    let mut out = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name:?}\n  namespace: {namespace:?}\n  uid: {:?}\n  labels: {}\nspec:\n",
        format!("{namespace}-{name}-uid"),
        labels_yaml(labels)
    );
    if !node.is_empty() {
        out.push_str(&format!("  nodeName: {node:?}\n"));
    }
    out.push_str(&format!(
        "  containers:\n  - name: c\n    image: app\n    resources:\n      requests: {}\n",
        labels_yaml(requests)
    ));
    out
}
