// Records, for the library manifest and the negotiation, the compiler ("rustc 1.95.0") and the
// ABI and SDK versions of the bindings in src/sys.rs (regenerating them from a newer plugin.h
// is all an ABI minor takes).
use std::process::Command;

fn constant<'a>(sys: &'a str, name: &str) -> &'a str {
    let at = sys
        .find(&format!("pub const {name} :"))
        .unwrap_or_else(|| panic!("src/sys.rs has no {name}"));
    let rest = &sys[at..];
    let value = &rest[rest.find('=').expect("a constant's value") + 1
        ..rest.find(';').expect("a constant's end")];
    value.trim().trim_start_matches("b\"").trim_end_matches("\\0\"")
}

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
    let sys = std::fs::read_to_string("src/sys.rs").expect("src/sys.rs");
    let sdk = sys.find("pub const SCHEDHOST_SDK_VERSION :").map(|at| {
        let rest = &sys[at..];
        let q = rest.find("b\"").expect("the SDK version's text") + 2;
        rest[q..q + rest[q..].find("\\0").expect("its end")].to_string()
    });
    println!("cargo:rustc-env=SCHEDHOST_ABI_MAJOR_TEXT={}", constant(&sys, "SCHEDHOST_ABI_MAJOR"));
    println!("cargo:rustc-env=SCHEDHOST_ABI_MINOR_TEXT={}", constant(&sys, "SCHEDHOST_ABI_MINOR"));
    println!(
        "cargo:rustc-env=SCHEDHOST_SDK_VERSION_TEXT={}",
        sdk.expect("src/sys.rs has no SCHEDHOST_SDK_VERSION")
    );
    // Host calls appended after 1.8 exist only in bindings of their minor: the crate builds
    // against an older plugin.h too (the previous-minor test), without them.
    println!("cargo::rustc-check-cfg=cfg(schedhost_abi_1_9)");
    let minor: u32 = constant(&sys, "SCHEDHOST_ABI_MINOR").parse().expect("a minor");
    if minor >= 9 {
        println!("cargo:rustc-cfg=schedhost_abi_1_9");
    }
    println!("cargo:rerun-if-env-changed=RUSTC");
    println!("cargo:rerun-if-changed=src/sys.rs");
}
