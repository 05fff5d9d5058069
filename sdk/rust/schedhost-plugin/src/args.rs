//! Plugin arguments (the `plugin_config.<Name>` table a plugin's `new` receives) and objects of
//! declared kinds, both read as the host's configuration tree.
//!
//! [`ArgsReader`] reads a table one line per key, with the C++ SDK's errors, which the host
//! reports as the profile's error:
//!
//! ```text
//! schedhost.toml:14:1: plugin_config.TargetLoadPacking.target_utilization: must be in the range [1, 99], got 120
//! schedhost.toml:15:1: plugin_config.TargetLoadPacking.targt: unknown key; did you mean "target_utilization"?
//! ```

use std::marker::PhantomData;

use crate::export::api;
use crate::{str_of, sys};

/// The kind of a tree node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// Absent.
    None,
    /// A table (TOML table, JSON object).
    Table,
    /// An array.
    Array,
    /// A string.
    String,
    /// An integer.
    Int,
    /// A float.
    Float,
    /// A boolean.
    Bool,
}

impl ArgKind {
    fn described(self) -> &'static str {
        match self {
            ArgKind::Table => "a table",
            ArgKind::Array => "an array",
            ArgKind::String => "a string",
            ArgKind::Int => "an integer",
            ArgKind::Float => "a float",
            ArgKind::Bool => "a boolean",
            ArgKind::None => "nothing",
        }
    }
}

/// A node of the host's configuration tree: plugin arguments, an object of a declared kind, a
/// pod's volumes. Borrowed from the host (arguments live as long as the plugin instance;
/// objects as the cycle that read them).
#[derive(Clone, Copy)]
pub struct Args<'a> {
    node: *const sys::schedhost_config,
    _p: PhantomData<&'a sys::schedhost_config>,
}

impl<'a> Args<'a> {
    /// A view of a raw tree node (NULL: absent).
    #[inline]
    pub fn from_raw(node: *const sys::schedhost_config) -> Args<'a> {
        Args { node, _p: PhantomData }
    }
    /// The raw node.
    #[inline]
    pub fn raw(&self) -> *const sys::schedhost_config {
        self.node
    }
    /// Whether the node exists.
    #[inline]
    pub fn present(&self) -> bool {
        !self.node.is_null()
    }
    /// The node's kind.
    #[inline]
    pub fn kind(&self) -> ArgKind {
        if self.node.is_null() {
            return ArgKind::None;
        }
        // SAFETY: the host's accessors take any node it handed out, or NULL.
        let k = unsafe { api().config_kind.map(|f| f(self.node)).unwrap_or(0) };
        match k as u32 {
            sys::SCHEDHOST_CONFIG_TABLE => ArgKind::Table,
            sys::SCHEDHOST_CONFIG_ARRAY => ArgKind::Array,
            sys::SCHEDHOST_CONFIG_STRING => ArgKind::String,
            sys::SCHEDHOST_CONFIG_INT => ArgKind::Int,
            sys::SCHEDHOST_CONFIG_FLOAT => ArgKind::Float,
            sys::SCHEDHOST_CONFIG_BOOL => ArgKind::Bool,
            _ => ArgKind::None,
        }
    }
    /// The child of a table under `key` (absent when there is none).
    #[inline]
    pub fn get(&self, key: &str) -> Args<'a> {
        if self.node.is_null() {
            return Args::from_raw(std::ptr::null());
        }
        // SAFETY: as kind().
        Args::from_raw(unsafe {
            api().config_get.map(|f| f(self.node, crate::abi_str(key))).unwrap_or(std::ptr::null())
        })
    }
    /// A path of keys, "spec.minMember".
    #[inline]
    pub fn path(&self, dotted: &str) -> Args<'a> {
        dotted.split('.').fold(*self, |node, key| node.get(key))
    }
    /// The number of entries of a table or array.
    #[inline]
    pub fn len(&self) -> usize {
        // SAFETY: as kind().
        unsafe { api().config_len.map(|f| f(self.node)).unwrap_or(0) }
    }
    /// Whether a table or array is empty (or the node is not one).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Entry `index` of an array or table, with its key for a table ("" for an array).
    #[inline]
    pub fn at(&self, index: usize) -> (&'a str, Args<'a>) {
        let mut key = sys::schedhost_str { data: std::ptr::null(), len: 0 };
        // SAFETY: as kind(); keys live as long as the tree.
        unsafe {
            let child =
                api().config_at.map(|f| f(self.node, index, &mut key)).unwrap_or(std::ptr::null());
            (str_of(key), Args::from_raw(child))
        }
    }
    /// The entries of an array or table.
    #[inline]
    pub fn entries(&self) -> impl Iterator<Item = (&'a str, Args<'a>)> + 'a {
        let this = *self;
        (0..this.len()).map(move |i| this.at(i))
    }
    /// The string value, when the node is one.
    #[inline]
    pub fn as_str(&self) -> Option<&'a str> {
        let mut out = sys::schedhost_str { data: std::ptr::null(), len: 0 };
        // SAFETY: as kind(); strings live as long as the tree.
        let rc = unsafe { api().config_string.map(|f| f(self.node, &mut out)).unwrap_or(-1) };
        (rc == sys::SCHEDHOST_OK).then(|| unsafe { str_of(out) })
    }
    /// The integer value, when the node is one.
    #[inline]
    pub fn as_int(&self) -> Option<i64> {
        let mut out = 0i64;
        // SAFETY: as kind().
        let rc = unsafe { api().config_int.map(|f| f(self.node, &mut out)).unwrap_or(-1) };
        (rc == sys::SCHEDHOST_OK).then_some(out)
    }
    /// The number (an integer converts), when the node is one.
    #[inline]
    pub fn as_float(&self) -> Option<f64> {
        let mut out = 0f64;
        // SAFETY: as kind().
        let rc = unsafe { api().config_float.map(|f| f(self.node, &mut out)).unwrap_or(-1) };
        (rc == sys::SCHEDHOST_OK).then_some(out)
    }
    /// The boolean value, when the node is one.
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        let mut out = 0i32;
        // SAFETY: as kind().
        let rc = unsafe { api().config_bool.map(|f| f(self.node, &mut out)).unwrap_or(-1) };
        (rc == sys::SCHEDHOST_OK).then_some(out != 0)
    }
    /// "file:line:col" of the node ("" when unknown); for an object, what names it.
    #[inline]
    pub fn location(&self) -> String {
        // SAFETY: as kind().
        unsafe {
            api().config_location.map(|f| str_of(f(self.node)).to_string()).unwrap_or_default()
        }
    }
    /// "file:line:col" of the node's key in its table (host abi 1.4; the node's own location
    /// on an older host).
    #[inline]
    pub fn key_location(&self) -> String {
        match host_fn_since!(config_key_location) {
            // SAFETY: as kind().
            Some(f) => unsafe { str_of(f(self.node)).to_string() },
            None => self.location(),
        }
    }
    /// A reader of this table for plugin `plugin`'s arguments (paths `plugin_config.<plugin>.`).
    #[inline]
    pub fn reader(&self, plugin: &str) -> ArgsReader<'a> {
        ArgsReader::new(*self, format!("plugin_config.{plugin}"), plugin.to_string(), true)
    }
}

/// Bounds of an integer (inclusive) and an absent key's value.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntOptions {
    /// The smallest value allowed.
    pub min: Option<i64>,
    /// The largest value allowed.
    pub max: Option<i64>,
    /// The value of an absent optional key.
    pub fallback: i64,
}

/// Rules for a string (or each string of a list).
#[derive(Clone, Copy, Default)]
pub struct StringOptions<'o> {
    /// The values allowed (empty: any).
    pub one_of: &'o [&'o str],
    /// A check the value must pass.
    pub valid: Option<fn(&str) -> bool>,
    /// What `valid` accepts, for its error ("a label key").
    pub what: &'o str,
    /// Refuse "".
    pub non_empty: bool,
    /// A list: refuse a value given twice.
    pub unique: bool,
    /// The value of an absent optional key.
    pub fallback: &'o str,
}

/// Bounds of a quantity and its unit.
#[derive(Clone, Copy, Debug, Default)]
pub struct QuantityOptions {
    /// Read in thousandths (millicores; upstream's MilliValue) instead of whole units.
    pub milli: bool,
    /// The smallest value allowed, in the unit read.
    pub min: Option<i64>,
    /// The largest value allowed, in the unit read.
    pub max: Option<i64>,
    /// The value of an absent optional key, in the unit read.
    pub fallback: i64,
}

/// Reads a table declaratively, one call per key, and [`ArgsReader::done`] refuses every key
/// nobody asked for, suggesting the closest known one. Every error names the key's path and
/// where it is written, as the C++ SDK's ArgsReader does.
pub struct ArgsReader<'a> {
    table: Args<'a>,
    path: String,
    plugin: String,
    root: bool,
    known: Vec<String>,
}

impl<'a> ArgsReader<'a> {
    fn new(table: Args<'a>, path: String, plugin: String, root: bool) -> ArgsReader<'a> {
        ArgsReader { table, path, plugin, root, known: Vec::new() }
    }

    /// A reader of the part at `path` ("spec") of an object of a declared kind: errors name
    /// the object and the field ("PodGroup team-a/gang: spec.minMember: is required").
    #[inline]
    pub fn object(node: Args<'a>, path: &str) -> ArgsReader<'a> {
        ArgsReader::new(node, path.to_string(), String::new(), false)
    }

    /// The full path of `key` in messages ("plugin_config.NodePool.label").
    #[inline]
    pub fn path_of(&self, key: &str) -> String {
        match (key.is_empty(), self.path.is_empty()) {
            (true, _) => self.path.clone(),
            (false, true) => key.to_string(),
            (false, false) => format!("{}.{}", self.path, key),
        }
    }

    fn check_table(&self) -> Result<(), String> {
        let k = self.table.kind();
        if k != ArgKind::None && k != ArgKind::Table {
            return Err(self.fail_at(
                self.table,
                &self.path,
                &format!("expected a table, not {}", k.described()),
            ));
        }
        Ok(())
    }

    fn fail_at(&self, at: Args<'_>, path: &str, message: &str) -> String {
        let loc = if at.present() { at.key_location() } else { self.table.key_location() };
        let mut out = String::new();
        if !loc.is_empty() {
            out.push_str(&loc);
            out.push_str(": ");
        }
        if !path.is_empty() {
            out.push_str(path);
            out.push_str(": ");
        }
        out.push_str(message);
        out
    }

    /// An error about `key` ("": this table), located at the key when it is given.
    #[inline]
    pub fn fail(&self, key: &str, message: &str) -> String {
        let at = if key.is_empty() { self.table } else { self.table.get(key) };
        self.fail_at(at, &self.path_of(key), message)
    }

    fn value(&mut self, key: &str, required: bool) -> Result<Args<'a>, String> {
        self.check_table()?;
        if !self.known.iter().any(|k| k == key) {
            self.known.push(key.to_string());
        }
        let v = self.table.get(key);
        if required && !v.present() {
            let wanted = [key.to_string()];
            for (other, child) in self.table.entries() {
                if !self.known.iter().any(|k| k == other) && closest_match(other, &wanted).is_some()
                {
                    return Err(self.fail_at(
                        child,
                        &self.path_of(key),
                        &format!("is required; did you mean \"{key}\" instead of \"{other}\"?"),
                    ));
                }
            }
            return Err(self.fail_at(
                Args::from_raw(std::ptr::null()),
                &self.path_of(key),
                "is required",
            ));
        }
        Ok(v)
    }

    fn expect(&self, v: Args<'_>, path: &str, kind: ArgKind, what: &str) -> Result<(), String> {
        if v.kind() != kind {
            return Err(self.fail_at(
                v,
                path,
                &format!("expected {what}, not {}", v.kind().described()),
            ));
        }
        Ok(())
    }

    fn check_range<T: PartialOrd + Copy>(
        &self,
        v: Args<'_>,
        path: &str,
        x: T,
        min: Option<T>,
        max: Option<T>,
        format: impl Fn(T) -> String,
    ) -> Result<(), String> {
        if min.map_or(true, |m| x >= m) && max.map_or(true, |m| x <= m) {
            return Ok(());
        }
        let range = match (min, max) {
            (Some(a), Some(b)) => format!("in the range [{}, {}]", format(a), format(b)),
            (Some(a), None) => format!("at least {}", format(a)),
            (None, Some(b)) => format!("at most {}", format(b)),
            (None, None) => unreachable!(),
        };
        Err(self.fail_at(v, path, &format!("must be {range}, got {}", format(x))))
    }

    fn read_int(&mut self, key: &str, opts: IntOptions, required: bool) -> Result<i64, String> {
        let v = self.value(key, required)?;
        if !v.present() {
            return Ok(opts.fallback);
        }
        let path = self.path_of(key);
        self.expect(v, &path, ArgKind::Int, "an integer")?;
        let x = v.as_int().unwrap_or(0);
        self.check_range(v, &path, x, opts.min, opts.max, |n| n.to_string())?;
        Ok(x)
    }

    /// An optional integer (`opts.fallback` when absent).
    #[inline]
    pub fn int(&mut self, key: &str, opts: IntOptions) -> Result<i64, String> {
        self.read_int(key, opts, false)
    }
    /// An integer that must be given.
    #[inline]
    pub fn required_int(&mut self, key: &str, opts: IntOptions) -> Result<i64, String> {
        self.read_int(key, opts, true)
    }

    /// An optional boolean.
    #[inline]
    pub fn bool(&mut self, key: &str, fallback: bool) -> Result<bool, String> {
        let v = self.value(key, false)?;
        if !v.present() {
            return Ok(fallback);
        }
        self.expect(v, &self.path_of(key), ArgKind::Bool, "a boolean")?;
        Ok(v.as_bool().unwrap_or(fallback))
    }

    fn check_string(
        &self,
        v: Args<'_>,
        path: &str,
        opts: &StringOptions<'_>,
    ) -> Result<String, String> {
        self.expect(v, path, ArgKind::String, "a string")?;
        let s = v.as_str().unwrap_or("").to_string();
        if opts.non_empty && s.is_empty() {
            return Err(self.fail_at(v, path, "must not be empty"));
        }
        if !opts.one_of.is_empty() && !opts.one_of.contains(&s.as_str()) {
            let supported: Vec<String> = opts.one_of.iter().map(|s| s.to_string()).collect();
            return Err(self.fail_at(v, path, &unsupported(&s, &supported)));
        }
        if let Some(valid) = opts.valid {
            if !valid(&s) {
                let what = if opts.what.is_empty() { "valid" } else { opts.what };
                return Err(self.fail_at(v, path, &format!("\"{s}\" is not {what}")));
            }
        }
        Ok(s)
    }

    /// An optional string (`opts.fallback` when absent).
    #[inline]
    pub fn string(&mut self, key: &str, opts: StringOptions<'_>) -> Result<String, String> {
        let v = self.value(key, false)?;
        if !v.present() {
            return Ok(opts.fallback.to_string());
        }
        self.check_string(v, &self.path_of(key), &opts)
    }
    /// A string that must be given.
    #[inline]
    pub fn required_string(
        &mut self,
        key: &str,
        opts: StringOptions<'_>,
    ) -> Result<String, String> {
        let v = self.value(key, true)?;
        self.check_string(v, &self.path_of(key), &opts)
    }

    /// An optional list of strings, each checked with `each` (`unique`: no value twice).
    #[inline]
    pub fn strings(&mut self, key: &str, each: StringOptions<'_>) -> Result<Vec<String>, String> {
        let v = self.value(key, false)?;
        let mut out: Vec<String> = Vec::new();
        if !v.present() {
            return Ok(out);
        }
        let path = self.path_of(key);
        self.expect(v, &path, ArgKind::Array, "an array of strings")?;
        for (i, (_, item)) in v.entries().enumerate() {
            let item_path = format!("{path}[{i}]");
            let s = self.check_string(item, &item_path, &each)?;
            if each.unique {
                if let Some(j) = out.iter().position(|o| *o == s) {
                    return Err(self.fail_at(
                        item,
                        &item_path,
                        &format!("\"{s}\" is given twice (also at [{j}])"),
                    ));
                }
            }
            out.push(s);
        }
        Ok(out)
    }

    /// An optional Kubernetes quantity ("2", "500m", "1.5Gi", or an integer), rounded up to
    /// the unit read as upstream's Value()/MilliValue() do.
    #[inline]
    pub fn quantity(&mut self, key: &str, opts: QuantityOptions) -> Result<i64, String> {
        let v = self.value(key, false)?;
        if !v.present() {
            return Ok(opts.fallback);
        }
        let path = self.path_of(key);
        let x = match v.kind() {
            ArgKind::Int => {
                let n = v.as_int().unwrap_or(0);
                if opts.milli {
                    n.checked_mul(1000)
                        .ok_or_else(|| self.fail_at(v, &path, &format!("{n} is too large")))?
                } else {
                    n
                }
            }
            ArgKind::String => parse_quantity(v.as_str().unwrap_or(""), opts.milli)
                .map_err(|why| self.fail_at(v, &path, &why))?,
            k => {
                return Err(self.fail_at(
                    v,
                    &path,
                    &format!(
                        "expected a quantity such as \"2\", \"500m\" or \"4Gi\", not {}",
                        k.described()
                    ),
                ))
            }
        };
        let milli = opts.milli;
        self.check_range(v, &path, x, opts.min, opts.max, |n| {
            if !milli || n % 1000 == 0 {
                (if milli { n / 1000 } else { n }).to_string()
            } else {
                format!("{n}m")
            }
        })?;
        Ok(x)
    }

    /// An optional number (an integer converts), within `min`..=`max` when given.
    pub fn float(
        &mut self,
        key: &str,
        min: Option<f64>,
        max: Option<f64>,
        fallback: f64,
    ) -> Result<f64, String> {
        let v = self.value(key, false)?;
        if !v.present() {
            return Ok(fallback);
        }
        let path = self.path_of(key);
        if v.kind() != ArgKind::Int {
            self.expect(v, &path, ArgKind::Float, "a number")?;
        }
        let x = v.as_float().unwrap_or(0.0);
        if x.is_nan() {
            return Err(self.fail_at(v, &path, "must be a number, not nan"));
        }
        self.check_range(v, &path, x, min, max, |n| n.to_string())?;
        Ok(x)
    }

    /// An optional Go duration ("250ms", "1m30s"; "0" alone needs no unit), at least `min`.
    pub fn duration(
        &mut self,
        key: &str,
        min: Option<std::time::Duration>,
        fallback: std::time::Duration,
    ) -> Result<std::time::Duration, String> {
        let v = self.value(key, false)?;
        if !v.present() {
            return Ok(fallback);
        }
        let path = self.path_of(key);
        let Some(text) = v.as_str() else {
            return Err(self.fail_at(
                v,
                &path,
                &format!(
                    "expected a duration such as \"30s\" or \"1m30s\", not {}",
                    v.kind().described()
                ),
            ));
        };
        let d = parse_duration(text).map_err(|why| self.fail_at(v, &path, &why))?;
        if let Some(m) = min {
            if d < m {
                return Err(self.fail_at(v, &path, &format!("must be at least {m:?}, got {d:?}")));
            }
        }
        Ok(d)
    }

    /// Reads the table under `key` with `f` (a nested reader whose unknown keys are refused);
    /// false when the key is absent.
    pub fn table(
        &mut self,
        key: &str,
        f: impl FnOnce(&mut ArgsReader<'a>) -> Result<(), String>,
    ) -> Result<bool, String> {
        let v = self.value(key, false)?;
        if !v.present() {
            return Ok(false);
        }
        let path = self.path_of(key);
        self.expect(v, &path, ArgKind::Table, "a table")?;
        let mut nested = ArgsReader::new(v, path, self.plugin.clone(), false);
        f(&mut nested)?;
        nested.done()?;
        Ok(true)
    }

    /// Reads each table of the array under `key` with `f(reader, index)`; the number read.
    pub fn tables(
        &mut self,
        key: &str,
        mut f: impl FnMut(&mut ArgsReader<'a>, usize) -> Result<(), String>,
    ) -> Result<usize, String> {
        let v = self.value(key, false)?;
        if !v.present() {
            return Ok(0);
        }
        let path = self.path_of(key);
        self.expect(v, &path, ArgKind::Array, "an array of tables")?;
        for (i, (_, item)) in v.entries().enumerate() {
            let item_path = format!("{path}[{i}]");
            self.expect(item, &item_path, ArgKind::Table, "a table")?;
            let mut nested = ArgsReader::new(item, item_path, self.plugin.clone(), false);
            f(&mut nested, i)?;
            nested.done()?;
        }
        Ok(v.len())
    }

    /// The raw value under `key` (and makes it known), for what the readers above do not read.
    #[inline]
    pub fn get(&mut self, key: &str) -> Result<Args<'a>, String> {
        self.value(key, false)
    }

    /// Refuses the first key of the table nobody asked about: "unknown key; did you mean
    /// \"label\"?" or "unknown key; known keys are: a, b".
    #[inline]
    pub fn done(&self) -> Result<(), String> {
        self.check_table()?;
        for (key, child) in self.table.entries() {
            if self.known.iter().any(|k| k == key) {
                continue;
            }
            let mut message = String::from("unknown key");
            if self.known.is_empty() {
                if self.root {
                    message.push_str(&format!("; {} takes no arguments", self.plugin));
                } else {
                    message.push_str("; this table takes none");
                }
            } else if let Some(m) = closest_match(key, &self.known) {
                message.push_str(&format!("; did you mean \"{m}\"?"));
            } else {
                message.push_str("; known keys are: ");
                message.push_str(&self.known.join(", "));
            }
            return Err(self.fail_at(child, &self.path_of(key), &message));
        }
        Ok(())
    }
}

fn unsupported(value: &str, supported: &[String]) -> String {
    match closest_match(value, supported) {
        Some(m) => format!("unsupported value \"{value}\"; did you mean \"{m}\"?"),
        None => {
            let quoted: Vec<String> = supported.iter().map(|s| format!("\"{s}\"")).collect();
            format!("unsupported value \"{value}\"; supported values: {}", quoted.join(", "))
        }
    }
}

/// The optimal-string-alignment distance between `a` and `b`, ignoring ASCII case.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<u8> = a.bytes().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<u8> = b.bytes().map(|c| c.to_ascii_lowercase()).collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// The candidate closest to `word` when it is close enough to be a typo (about one edit per
/// three characters, one to three; or a candidate `word` of three or more characters starts).
pub(crate) fn closest_match(word: &str, candidates: &[String]) -> Option<String> {
    let allowed = (word.len() / 3).clamp(1, 3);
    let mut best = None;
    let mut best_distance = allowed + 1;
    for c in candidates {
        if c == word {
            continue;
        }
        let mut distance = edit_distance(word, c);
        let prefix = word.len() >= 3
            && c.len() > word.len()
            && c.is_char_boundary(word.len())
            && edit_distance(word, &c[..word.len()]) == 0;
        if prefix {
            distance = distance.min(allowed);
        }
        if distance < best_distance {
            best_distance = distance;
            best = Some(c.clone());
        }
    }
    best
}

/// Parses a Kubernetes quantity into whole units or thousandths, rounding up as upstream.
pub(crate) fn parse_quantity(text: &str, milli: bool) -> Result<i64, String> {
    let not = || format!("\"{text}\" is not a quantity (want e.g. 2, 500m, 1.5, 4Gi)");
    let s = text.trim();
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let number_end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, suffix) = s.split_at(number_end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return Err(not());
    }
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    // value = digits * 10^exp10 * 2^exp2
    let digits: String = format!("{whole}{fraction}");
    let mut exp10: i32 = -(fraction.len() as i32);
    let mut exp2: u32 = 0;
    match suffix {
        "" => {}
        "n" => exp10 -= 9,
        "u" => exp10 -= 6,
        "m" => exp10 -= 3,
        "k" => exp10 += 3,
        "M" => exp10 += 6,
        "G" => exp10 += 9,
        "T" => exp10 += 12,
        "P" => exp10 += 15,
        "E" => exp10 += 18,
        "Ki" => exp2 = 10,
        "Mi" => exp2 = 20,
        "Gi" => exp2 = 30,
        "Ti" => exp2 = 40,
        "Pi" => exp2 = 50,
        "Ei" => exp2 = 60,
        _ if suffix.starts_with(['e', 'E']) => {
            exp10 += suffix[1..]
                .parse::<i32>()
                .map_err(|_| format!("\"{text}\" is not a quantity: bad exponent \"{suffix}\""))?;
        }
        _ => return Err(format!("\"{text}\" is not a quantity: unknown suffix \"{suffix}\"")),
    }
    if milli {
        exp10 += 3;
    }
    let too_large = || format!("\"{text}\" is too large");
    let mut value: i128 = 0;
    for c in digits.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(c - b'0')))
            .ok_or_else(too_large)?;
        if value > i128::from(i64::MAX) * 1_000_000_000_000_000_000 {
            return Err(too_large());
        }
    }
    value = value.checked_mul(1i128 << exp2).ok_or_else(too_large)?;
    if exp10 >= 0 {
        for _ in 0..exp10 {
            value = value.checked_mul(10).ok_or_else(too_large)?;
        }
    } else {
        let mut divisor: i128 = 1;
        for _ in 0..(-exp10).min(38) {
            divisor *= 10;
        }
        // Round up (away from zero for the magnitude, as upstream's Value()/MilliValue()).
        value = (value + divisor - 1) / divisor;
    }
    if value > i128::from(i64::MAX) {
        return Err(too_large());
    }
    let v = value as i64;
    Ok(if negative { -v } else { v })
}

/// Parses a Go duration ("250ms", "1m30s", "1.5h"; "0" alone needs no unit). Negative
/// durations are refused: plugin arguments have no use for them.
pub(crate) fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let invalid = |why: &str| format!("invalid duration \"{text}\": {why}");
    if text == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    if text.is_empty() {
        return Err(invalid("empty"));
    }
    if text.starts_with('-') {
        return Err(invalid("must not be negative"));
    }
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let n = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (number, tail) = rest.split_at(n);
        if number.is_empty() {
            return Err(invalid(&format!("expected a number at \"{rest}\"")));
        }
        if number == "." || number.matches('.').count() > 1 {
            return Err(invalid("a \".\" needs digits beside it"));
        }
        let u = tail.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(tail.len());
        let (unit, next) = tail.split_at(u);
        let scale = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "" => {
                return Err(invalid(&format!(
                    "missing unit after \"{number}\" (ns, us, ms, s, m, h)"
                )))
            }
            other => {
                return Err(invalid(&format!("unknown unit \"{other}\" (ns, us, ms, s, m, h)")))
            }
        };
        total += number.parse::<f64>().map_err(|_| invalid("bad number"))? * scale;
        rest = next;
    }
    std::time::Duration::try_from_secs_f64(total).map_err(|_| invalid("out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_as_upstream() {
        assert_eq!(parse_quantity("500m", true), Ok(500));
        assert_eq!(parse_quantity("1.5", true), Ok(1500));
        assert_eq!(parse_quantity("2", true), Ok(2000));
        assert_eq!(parse_quantity("1Gi", false), Ok(1 << 30));
        assert_eq!(parse_quantity("1k", false), Ok(1000));
        assert_eq!(parse_quantity("2e3", false), Ok(2000));
        assert_eq!(parse_quantity("100m", false), Ok(1)); // rounds up
        assert_eq!(parse_quantity("-1", true), Ok(-1000));
        assert!(parse_quantity("abc", false).unwrap_err().contains("is not a quantity"));
        assert!(parse_quantity("1Qi", false).unwrap_err().contains("unknown suffix \"Qi\""));
        assert!(parse_quantity("99999999999999999999", false).unwrap_err().contains("too large"));
    }

    #[test]
    fn durations_read_as_go() {
        use std::time::Duration;
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert!(parse_duration("10").unwrap_err().contains("missing unit"));
        assert!(parse_duration("3d").unwrap_err().contains("unknown unit \"d\""));
        assert!(parse_duration("-1s").unwrap_err().contains("negative"));
        assert!(parse_duration("").unwrap_err().contains("empty"));
    }

    #[test]
    fn typos_are_matched_as_the_cpp_sdk_matches_them() {
        let known = vec!["label".to_string(), "max_per_zone".to_string()];
        assert_eq!(closest_match("lable", &known).as_deref(), Some("label"));
        assert_eq!(closest_match("max", &known).as_deref(), Some("max_per_zone"));
        assert_eq!(closest_match("zzzzzz", &known), None);
        assert_eq!(closest_match("label", &known), None);
        assert_eq!(edit_distance("ab", "BA"), 1);
    }
}
