//! Generates the C header from src/ffi into OUT_DIR (a test compares it
//! with the committed include/minimalloc.h; set MINIMALLOC_WRITE_HEADER=1
//! to rewrite that), and gives the shared library its SONAME.

use std::env;
use std::path::PathBuf;

/// ABI version of the shared library, in its SONAME: bumped on any
/// incompatible change of the C API, independently of the crate version.
const ABI_VERSION: u32 = 2;

/// The tools some tests need: a test whose tool is missing is compiled
/// `#[ignore]`d with the reason, so that it reads `ignored`, never `ok`.
/// With MINIMALLOC_REQUIRE_TOOLS=1 every such test is compiled to run, and
/// fails where its tool is missing. Decided when the build script runs (a
/// tool installed since: `cargo clean -p minimalloc`).
fn tools() {
    println!("cargo:rerun-if-env-changed=MINIMALLOC_REQUIRE_TOOLS");
    println!("cargo:rerun-if-env-changed=PATH");
    let required = env::var_os("MINIMALLOC_REQUIRE_TOOLS").is_some_and(|v| v == "1");
    for (tool, cfg) in [("cmake", "has_cmake"), ("pkg-config", "has_pkg_config")] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        let found = std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if found || required {
            println!("cargo:rustc-cfg={cfg}");
        }
    }
}

fn main() {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("set by cargo"));
    let version = env::var("CARGO_PKG_VERSION").expect("set by cargo");
    let part = |name: &str| env::var(name).expect("set by cargo");
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cmake/minimallocConfigVersion.cmake.in");
    println!("cargo:rerun-if-env-changed=MINIMALLOC_WRITE_HEADER");
    println!("cargo:rustc-env=MINIMALLOC_ABI_VERSION={ABI_VERSION}");
    println!("cargo:rustc-env=MINIMALLOC_TARGET={}", part("TARGET"));

    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let defines = format!(
        "\n/** Version of the library this header belongs to. */\n\
         #define MINIMALLOC_VERSION \"{version}\"\n\
         #define MINIMALLOC_VERSION_MAJOR {}\n\
         #define MINIMALLOC_VERSION_MINOR {}\n\
         #define MINIMALLOC_VERSION_PATCH {}\n\
         /** ABI version, the number in the shared library's SONAME. */\n\
         #define MINIMALLOC_ABI_VERSION {ABI_VERSION}\n",
        part("CARGO_PKG_VERSION_MAJOR"),
        part("CARGO_PKG_VERSION_MINOR"),
        part("CARGO_PKG_VERSION_PATCH"),
    );
    // Only src/ffi is the C API: parse that module (cbindgen follows its
    // submodules), not the whole crate.
    let header = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/ffi/mod.rs"))
        .with_after_include(defines)
        .generate()
        .expect("cbindgen could not read src/ffi");
    header.write_to_file(out.join("minimalloc.h"));
    if env::var_os("MINIMALLOC_WRITE_HEADER").is_some() {
        header.write_to_file(dir.join("include/minimalloc.h"));
    }

    tools();

    let os = part("CARGO_CFG_TARGET_OS");
    // Without std nothing pulls in the C library, yet the core calls its
    // malloc and clock (src/runtime.rs): say so.
    if env::var_os("CARGO_FEATURE_STD").is_none() && env::var_os("CARGO_CFG_UNIX").is_some() {
        println!("cargo:rustc-link-lib=c");
    }
    if os != "linux" && os != "android" {
        return;
    }
    // The SONAME carries the ABI version: libminimalloc.so.2.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libminimalloc.so.{ABI_VERSION}");
    link_soname_in_build_tree(&out);

    // The tiny profile (no std, opt-level "z", panic = "abort"): nothing
    // unwinds, so the unwind tables, the landing pads and the prebuilt
    // core's pointer to the unwinder's personality routine can go, and
    // relative relocations are packed (ld 2.38+; older ones ignore it).
    let tiny = env::var_os("CARGO_FEATURE_STD").is_none() && part("OPT_LEVEL") == "z";
    let pointer_bits = part("CARGO_CFG_TARGET_POINTER_WIDTH");
    package_config_in_build_tree(&out, &dir, &version, &pointer_bits);
    if tiny && part("CARGO_CFG_TARGET_ENV") == "gnu" {
        let script = out.join("discard-unwind.ld");
        std::fs::write(
            &script,
            "SECTIONS\n{\n  /DISCARD/ : { *(.eh_frame) *(.eh_frame_hdr) *(.gcc_except_table*) \
             *(.data.DW.ref.rust_eh_personality) *(.data.rel.local.DW.ref.rust_eh_personality) *(.comment) }\n}\nINSERT AFTER .text;\n",
        )
        .expect("OUT_DIR is writable");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--no-eh-frame-hdr");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,pack-relative-relocs");
        // No C runtime start files: the library has no C constructors or
        // destructors for crtbegin/crtend to run.
        println!("cargo:rustc-cdylib-link-arg=-nostartfiles");
        println!("cargo:rustc-cdylib-link-arg={}", script.display());
    }
}

/// A CMake package for the build tree: `<target>/<profile>/lib/cmake/minimalloc/`
/// holds a config and a version file naming the libraries beside it and
/// the header in include/, so that a project finds an uninstalled build
/// with `-DCMAKE_PREFIX_PATH=target/release` (or `-Dminimalloc_DIR=`) as it
/// finds an installed one; the targets are the same (`minimalloc::minimalloc`,
/// `minimalloc::minimalloc_static`). Installed packages come from
/// cmake/install.cmake, with paths relative to their prefix.
fn package_config_in_build_tree(
    out: &std::path::Path,
    root: &std::path::Path,
    version: &str,
    pointer_bits: &str,
) {
    let Some(profile_dir) = out.ancestors().nth(3) else {
        return;
    };
    // Where find_package looks under a prefix on Unix.
    let dir = profile_dir.join("lib").join("cmake").join("minimalloc");
    if std::fs::create_dir_all(&dir).is_err() {
        return; // a read-only tree only loses this convenience
    }
    // What a static Rust library needs from the system on Linux (as
    // `rustc --print native-static-libs` reports for the gnu targets).
    let native = "gcc_s;util;rt;pthread;m;dl;c";
    let cmake_path = |p: &std::path::Path| p.display().to_string().replace('\\', "/");
    let config = format!(
        "# CMake package for the minimalloc {version} build tree (made by build.rs;\n\
         # installed packages come from cmake/install.cmake).\n\
         if(NOT TARGET minimalloc::minimalloc)\n\
         \x20 add_library(minimalloc::minimalloc SHARED IMPORTED)\n\
         \x20 set_target_properties(minimalloc::minimalloc PROPERTIES\n\
         \x20   IMPORTED_LOCATION \"{lib}/libminimalloc.so.{ABI_VERSION}\"\n\
         \x20   IMPORTED_SONAME \"libminimalloc.so.{ABI_VERSION}\"\n\
         \x20   INTERFACE_INCLUDE_DIRECTORIES \"{include}\")\n\
         endif()\n\
         if(NOT TARGET minimalloc::minimalloc_static)\n\
         \x20 add_library(minimalloc::minimalloc_static STATIC IMPORTED)\n\
         \x20 set_target_properties(minimalloc::minimalloc_static PROPERTIES\n\
         \x20   IMPORTED_LOCATION \"{lib}/libminimalloc.a\"\n\
         \x20   IMPORTED_LINK_INTERFACE_LANGUAGES \"C\"\n\
         \x20   INTERFACE_INCLUDE_DIRECTORIES \"{include}\"\n\
         \x20   INTERFACE_LINK_LIBRARIES \"{native}\")\n\
         endif()\n",
        lib = cmake_path(profile_dir),
        include = cmake_path(&root.join("include")),
    );
    // The installed package's version rule (same major version), shared.
    let version_file = std::fs::read_to_string(root.join("cmake/minimallocConfigVersion.cmake.in"))
        .map(|t| {
            let major = version.split('.').next().unwrap_or("0");
            t.replace("@VERSION@", version)
                .replace("@VERSION_MAJOR@", major)
                .replace(
                    "@POINTER_BYTES@",
                    &(pointer_bits.parse::<u32>().unwrap_or(64) / 8).to_string(),
                )
                .replace("@POINTER_BITS@", pointer_bits)
        });
    let _ = std::fs::write(dir.join("minimallocConfig.cmake"), config);
    if let Ok(text) = version_file {
        let _ = std::fs::write(dir.join("minimallocConfigVersion.cmake"), text);
    }
}

/// A program linked against the build tree (`-Ltarget/release`) asks the
/// loader for the SONAME, libminimalloc.so.2, so that name must exist
/// beside libminimalloc.so, as it does once installed. Cargo has no step
/// after linking; the link is made here, relative, before the library it
/// points to exists. OUT_DIR is <target>/<profile>/build/<pkg>/out.
fn link_soname_in_build_tree(out: &std::path::Path) {
    #[cfg(unix)]
    {
        let Some(profile_dir) = out.ancestors().nth(3) else {
            return;
        };
        let link = profile_dir.join(format!("libminimalloc.so.{ABI_VERSION}"));
        if std::fs::symlink_metadata(&link).is_err() {
            // A failure (a read-only tree) only costs this convenience.
            let _ = std::os::unix::fs::symlink("libminimalloc.so", &link);
        }
    }
    #[cfg(not(unix))]
    let _ = out;
}
