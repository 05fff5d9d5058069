// Records the compiler for the library manifest's `compiler` line ("rustc 1.95.0").
use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=SCHEDHOST_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
