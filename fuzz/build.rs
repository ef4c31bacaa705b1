//! Compiles the C driver of the ABI (c_tests/abi_ops.c) that the fuzz
//! target feeds: the programs it runs are C calls through the header, as
//! a compiler pass makes them.
fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    println!("cargo:rerun-if-changed=../c_tests/abi_ops.c");
    println!("cargo:rerun-if-changed=../c_tests/abi_ops.h");
    cc::Build::new()
        .file(root.join("c_tests/abi_ops.c"))
        .include(root.join("include"))
        .include(root.join("c_tests"))
        .compile("abi_ops");
}
